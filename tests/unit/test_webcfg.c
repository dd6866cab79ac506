// SPDX-License-Identifier: GPL-2.0
/* --web.config.file: exporter-toolkit's keys, errors with their line, bcrypt checks. */
#include <errno.h>
#include <stdlib.h>
#include "unit.h"
#include "export/webcfg.h"

/* htpasswd -nbBC 4 "" secret */
#define HASH "$2y$04$I3KkGR2P1lFRV3LRBxBWOenBnMlC4VZjwahGc8sg89DIdnlmd9owu"

static int parse_text(const char *text, struct bw_webcfg *c, char *why, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err = bw_webcfg_parse(f, "/etc/blkwise/web.yml", c, why, len);

	fclose(f);
	return err;
}

static void test_full_file(void)
{
	static const char text[] =
		"tls_server_config:\n"
		"  cert_file: server.crt\n"
		"  key_file: /keys/server.key\n"
		"  client_auth_type: RequireAndVerifyClientCert\n"
		"  client_ca_file: ca.crt\n"
		"  min_version: TLS13\n"
		"http_server_config:\n"
		"  http2: false\n"
		"  headers:\n"
		"    X-Frame-Options: deny\n"
		"    Content-Security-Policy: \"\"\n"
		"basic_auth_users:\n"
		"  prometheus: " HASH "\n";
	struct bw_webcfg c;
	char why[256] = "", prio[256];

	CHECK(!parse_text(text, &c, why, sizeof(why)), "parses: %s", why);
	CHECK(c.tls, "TLS on");
	CHECK(c.cert_file && !strcmp(c.cert_file, "/etc/blkwise/server.crt"),
	      "relative to the file's directory: %s", c.cert_file);
	CHECK(c.key_file && !strcmp(c.key_file, "/keys/server.key"), "absolute kept: %s", c.key_file);
	CHECK(c.client_auth == BW_REQUIRE_AND_VERIFY_CLIENT_CERT, "client auth %d", c.client_auth);
	CHECK(c.min_version == 13 && c.max_version == 0, "versions %d %d", c.min_version,
	      c.max_version);
	bw_webcfg_priorities(&c, prio, sizeof(prio));
	CHECK(!strcmp(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-SECP521R1:%SERVER_PRECEDENCE"), "priorities %s", prio);
	CHECK(c.nheaders == 1 && !strcmp(c.header_name[0], "X-Frame-Options") &&
	      !strcmp(c.header_value[0], "deny"), "one header (a blank one left out)");
	CHECK(c.nusers == 1 && !strcmp(c.users[0].name, "prometheus"), "one user");
	CHECK(bw_webcfg_auth(&c, "prometheus", "secret"), "the password");
	CHECK(bw_webcfg_auth(&c, "prometheus", "secret"), "the password again (cached)");
	CHECK(!bw_webcfg_auth(&c, "prometheus", "secreT"), "a wrong password");
	CHECK(!bw_webcfg_auth(&c, "prometheus", "secret1"), "a longer one");
	CHECK(!bw_webcfg_auth(&c, "prometheus", ""), "an empty one");
	CHECK(!bw_webcfg_auth(&c, "other", "secret"), "an unknown user");
	CHECK(!bw_webcfg_auth(&c, NULL, NULL), "no credentials");
	bw_webcfg_free(&c);
}

static void test_empty_and_defaults(void)
{
	struct bw_webcfg c;
	char why[256] = "", prio[256];

	CHECK(!parse_text("", &c, why, sizeof(why)), "an empty file: %s", why);
	CHECK(!c.tls && !c.nusers && bw_webcfg_auth(&c, NULL, NULL), "nothing asked");
	bw_webcfg_free(&c);
	CHECK(!parse_text("tls_server_config:\n  cert_file: a\n  key_file: b\n", &c, why,
			  sizeof(why)), "TLS only: %s", why);
	bw_webcfg_priorities(&c, prio, sizeof(prio));
	CHECK(!strcmp(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-SECP521R1:%SERVER_PRECEDENCE"),
	      "TLS 1.2 and 1.3 by default: %s", prio);
	CHECK(c.client_auth == BW_NO_CLIENT_CERT, "no client certificate");
	bw_webcfg_free(&c);
}

static void test_errors_name_their_line(void)
{
	static const struct {
		const char *text, *line, *what;
	} bad[] = {
		{ "a: 1\n", "web.yml:1: ", "unknown key 'a'" },
		{ "\n\nbasic_auth_users:\n  p: notahash\n", "web.yml:4: ", "not a bcrypt hash" },
		{ "basic_auth_users:\n  p: " HASH "\n  p: " HASH "\n", "web.yml:3: ", "given twice" },
		{ "tls_server_config:\n  key_file: k\n", "web.yml:1: ", "missing cert_file" },
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n"
		  "  max_version: TLS12\n", "web.yml:1: ", "above max_version" },
		{ "tls_server_config:\n  client_auth_type: RequireAnyClientCert\n", "web.yml:1: ",
		  "need TLS" },
		{ "http_server_config:\n  headers:\n    X-Frame-Options: allow\n", "web.yml:3: ",
		  "invalid X-Frame-Options" },
		{ "http_server_config:\n  http2: yes please\n", "web.yml:2: ", "true or false" },
		{ "tls_server_config: [a, b]\n", "web.yml:1: ", "give a mapping" },
		{ "rate_limit:\n  burst: 1\n", "web.yml:1: ", "not supported" },
		{ "basic_auth_users:\n  p: \"" HASH "\n", "web.yml:", "" },
	};
	struct bw_webcfg c;
	char why[256];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK(parse_text(bad[i].text, &c, why, sizeof(why)) == -EINVAL, "refused: %s",
		      bad[i].text);
		CHECK(strstr(why, bad[i].line) && strstr(why, bad[i].what), "%s: says '%s%s': %s",
		      bad[i].text, bad[i].line, bad[i].what, why);
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT(test_full_file), UNIT(test_empty_and_defaults), UNIT(test_errors_name_their_line),
	};

	return unit_run("webcfg", tests, sizeof(tests) / sizeof(tests[0]));
}
