// SPDX-License-Identifier: GPL-2.0
/*
 * --web.config.file: the YAML format of Prometheus' exporter-toolkit
 * (docs/web-configuration.md there), the same keys with the same meaning,
 * so a file written for node_exporter works here:
 *
 *	tls_server_config:
 *	  cert_file: server.crt
 *	  key_file: server.key
 *	  client_auth_type: RequireAndVerifyClientCert
 *	  client_ca_file: ca.crt
 *	  min_version: TLS12
 *	http_server_config:
 *	  headers:
 *	    X-Content-Type-Options: nosniff
 *	basic_auth_users:
 *	  prometheus: $2y$10$...	(bcrypt)
 *
 * Relative file names are relative to the config file's directory, as
 * exporter-toolkit reads them.  What the toolkit has and blkwise does not
 * (inline PEM, cipher suites, curves, allowed SANs, rate_limit) is refused
 * with its line rather than ignored: a setting that silently does nothing
 * is worse than none.  Every error names the file and the line.
 */
#include <crypt.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "export/webcfg.h"

#define BW_TLS_GROUPS ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-SECP521R1"

struct parse {
	yaml_document_t *doc;
	const char *path;
	char *why;
	size_t len;
};

static int bad(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->why, p->len, "%s:%lu: %s", p->path, n ? (unsigned long)n->start_mark.line + 1 : 1,
		 msg);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A YAML null: an empty plain scalar, ~ or null. */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null"));
}

static int need_string(struct parse *p, const yaml_node_t *v, const char *key, char **out)
{
	const char *s = scalar(v);

	if (!s)
		return bad(p, v, "%s: give a string", key);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int need_bool(struct parse *p, const yaml_node_t *v, const char *key, bool *out)
{
	const char *s = scalar(v);

	if (s && !strcmp(s, "true"))
		*out = true;
	else if (s && !strcmp(s, "false"))
		*out = false;
	else
		return bad(p, v, "%s: give true or false", key);
	return 0;
}

/* A mapping's pairs: each key must be a string. */
typedef int (*pair_fn)(struct parse *p, const yaml_node_t *k, const char *key,
		       const yaml_node_t *v, struct bw_webcfg *c);

static int each_pair(struct parse *p, const yaml_node_t *m, const char *what, pair_fn fn,
		     struct bw_webcfg *c)
{
	yaml_node_pair_t *pr;

	if (is_null(m))
		return 0;
	if (m->type != YAML_MAPPING_NODE)
		return bad(p, m, "%s: give a mapping (key: value lines)", what);
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		const yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		const yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
		int err;

		if (!scalar(k))
			return bad(p, k, "%s: a key must be a string", what);
		err = fn(p, k, scalar(k), v, c);
		if (err)
			return err;
	}
	return 0;
}

static int tls_version(struct parse *p, const yaml_node_t *v, const char *key, int *out)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	const char *s = scalar(v);
	int i;

	for (i = 0; s && i < 4; i++) {
		if (!strcmp(s, names[i])) {
			*out = 10 + i;
			return 0;
		}
	}
	return bad(p, v, "%s: unknown TLS version '%s': give TLS10, TLS11, TLS12 or TLS13", key,
		   s ? s : "");
}

static const char *const auth_names[] = {
	[BW_NO_CLIENT_CERT] = "NoClientCert",
	[BW_REQUEST_CLIENT_CERT] = "RequestClientCert",
	[BW_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
	[BW_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[BW_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

const char *bw_client_auth_name(enum bw_client_auth a)
{
	return auth_names[a];
}

static int client_auth(struct parse *p, const yaml_node_t *v, struct bw_webcfg *c)
{
	const char *s = scalar(v);
	unsigned int i;

	for (i = 0; s && i < sizeof(auth_names) / sizeof(auth_names[0]); i++) {
		if (!strcmp(s, auth_names[i])) {
			c->client_auth = i;
			return 0;
		}
	}
	if (s && !*s) {
		c->client_auth = BW_NO_CLIENT_CERT;
		return 0;
	}
	return bad(p, v, "client_auth_type: invalid '%s': give NoClientCert, RequestClientCert, "
		   "RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert",
		   s ? s : "");
}

static int tls_pair(struct parse *p, const yaml_node_t *k, const char *key, const yaml_node_t *v,
		    struct bw_webcfg *c)
{
	static const char *const unsupported[] = {
		"cert", "key", "client_ca", "client_allowed_sans", "cipher_suites",
		"curve_preferences",
	};
	unsigned int i;

	if (!strcmp(key, "cert_file"))
		return need_string(p, v, key, &c->cert_file);
	if (!strcmp(key, "key_file"))
		return need_string(p, v, key, &c->key_file);
	if (!strcmp(key, "client_ca_file"))
		return need_string(p, v, key, &c->client_ca_file);
	if (!strcmp(key, "client_auth_type"))
		return client_auth(p, v, c);
	if (!strcmp(key, "min_version"))
		return tls_version(p, v, key, &c->min_version);
	if (!strcmp(key, "max_version"))
		return tls_version(p, v, key, &c->max_version);
	if (!strcmp(key, "prefer_server_cipher_suites"))
		return need_bool(p, v, key, &c->prefer_server_ciphers);
	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (!strcmp(key, unsupported[i]))
			return bad(p, k, "tls_server_config: %s is not supported by blkwise", key);
	return bad(p, k, "tls_server_config: unknown key '%s'", key);
}

/* exporter-toolkit's header list, with the values it accepts (NULL: any). */
static const struct {
	const char *name, *values[3];
} headers[] = {
	{ "Content-Security-Policy", { NULL } },
	{ "X-Frame-Options", { "deny", "sameorigin", NULL } },
	{ "X-Content-Type-Options", { "nosniff", NULL } },
	{ "X-XSS-Protection", { NULL } },
	{ "Strict-Transport-Security", { NULL } },
};

static int header_pair(struct parse *p, const yaml_node_t *k, const char *key,
		       const yaml_node_t *v, struct bw_webcfg *c)
{
	const char *s = scalar(v);
	unsigned int i, j;

	for (i = 0; i < sizeof(headers) / sizeof(headers[0]); i++)
		if (!strcasecmp(key, headers[i].name))
			break;
	if (i == sizeof(headers) / sizeof(headers[0]))
		return bad(p, k, "headers: '%s' is not one of Content-Security-Policy, "
			   "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
			   "Strict-Transport-Security", key);
	if (!s)
		return bad(p, v, "headers: %s: give a string", key);
	if (!*s)	/* unset if blank */
		return 0;
	for (j = 0; headers[i].values[j]; j++)
		if (!strcasecmp(s, headers[i].values[j]))
			break;
	if (headers[i].values[0] && !headers[i].values[j])
		return bad(p, v, "headers: invalid %s '%s'", headers[i].name, s);
	if (strpbrk(s, "\r\n"))
		return bad(p, v, "headers: %s: a value cannot span lines", headers[i].name);
	for (j = 0; j < (unsigned int)c->nheaders; j++)
		if (!strcmp(c->header_name[j], headers[i].name))
			return bad(p, k, "headers: %s given twice", headers[i].name);
	c->header_name[c->nheaders] = strdup(headers[i].name);
	c->header_value[c->nheaders] = strdup(s);
	if (!c->header_name[c->nheaders] || !c->header_value[c->nheaders])
		return -ENOMEM;
	c->nheaders++;
	return 0;
}

static int http_pair(struct parse *p, const yaml_node_t *k, const char *key, const yaml_node_t *v,
		     struct bw_webcfg *c)
{
	bool http2;

	if (!strcmp(key, "http2"))	/* served as HTTP/1.1 either way */
		return need_bool(p, v, key, &http2);
	if (!strcmp(key, "headers"))
		return each_pair(p, v, "headers", header_pair, c);
	return bad(p, k, "http_server_config: unknown key '%s'", key);
}

/* A bcrypt hash libxcrypt takes: $2a$, $2b$ or $2y$, cost, 53 characters. */
static bool is_bcrypt(const char *h)
{
	return (!strncmp(h, "$2a$", 4) || !strncmp(h, "$2b$", 4) || !strncmp(h, "$2y$", 4)) &&
	       strlen(h) == 60 && crypt_checksalt(h) == CRYPT_SALT_OK;
}

static int user_pair(struct parse *p, const yaml_node_t *k, const char *key,
		     const yaml_node_t *v, struct bw_webcfg *c)
{
	const char *h = scalar(v);
	struct bw_web_user *u;
	int i;

	if (!*key || strchr(key, ':'))
		return bad(p, k, "basic_auth_users: '%s' is not a user name", key);
	if (!h || !is_bcrypt(h))
		return bad(p, v, "basic_auth_users: %s: not a bcrypt hash (make one with "
			   "htpasswd -nBC 10 \"\" | tr -d ':\\n')", key);
	for (i = 0; i < c->nusers; i++)
		if (!strcmp(c->users[i].name, key))
			return bad(p, k, "basic_auth_users: %s given twice", key);
	u = realloc(c->users, (c->nusers + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	c->users = u;
	u = &u[c->nusers];
	memset(u, 0, sizeof(*u));
	u->name = strdup(key);
	u->hash = strdup(h);
	c->nusers++;
	return u->name && u->hash ? 0 : -ENOMEM;
}

static int top_pair(struct parse *p, const yaml_node_t *k, const char *key, const yaml_node_t *v,
		    struct bw_webcfg *c)
{
	if (!strcmp(key, "tls_server_config")) {
		c->cert_line = k->start_mark.line + 1;
		return each_pair(p, v, key, tls_pair, c);
	}
	if (!strcmp(key, "http_server_config"))
		return each_pair(p, v, key, http_pair, c);
	if (!strcmp(key, "basic_auth_users"))
		return each_pair(p, v, key, user_pair, c);
	if (!strcmp(key, "rate_limit"))
		return bad(p, k, "rate_limit is not supported by blkwise (see --max-per-ip)");
	return bad(p, k, "unknown key '%s': give tls_server_config, http_server_config or "
		   "basic_auth_users", key);
}

/* A name relative to the config file's directory. */
static int resolve(char **name, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *r;

	if (!*name || (*name)[0] == '/' || !slash)
		return 0;
	if (asprintf(&r, "%.*s/%s", (int)(slash - path), path, *name) < 0)
		return -ENOMEM;
	free(*name);
	*name = r;
	return 0;
}

/* exporter-toolkit's checks of the TLS settings as a whole. */
static int check_tls(struct parse *p, struct bw_webcfg *c)
{
	const char *what = NULL;
	int line = c->cert_line;

	if (!c->cert_file && !c->key_file) {
		if (c->client_ca_file || c->client_auth != BW_NO_CLIENT_CERT)
			what = "client certificates need TLS: give cert_file and key_file";
	} else if (!c->cert_file) {
		what = "missing cert_file";
	} else if (!c->key_file) {
		what = "missing key_file";
	} else if (c->client_ca_file && c->client_auth == BW_NO_CLIENT_CERT) {
		what = "client_ca_file is given without a client_auth_type";
	} else if (!c->client_ca_file && (c->client_auth == BW_VERIFY_CLIENT_CERT_IF_GIVEN ||
					  c->client_auth == BW_REQUIRE_AND_VERIFY_CLIENT_CERT)) {
		what = "client_auth_type verifies client certificates: give client_ca_file";
	} else if (c->max_version && c->min_version > c->max_version) {
		what = "min_version is above max_version";
	}
	if (what) {
		snprintf(p->why, p->len, "%s:%d: tls_server_config: %s", p->path, line ? line : 1,
			 what);
		return -EINVAL;
	}
	c->tls = c->cert_file != NULL;
	if (resolve(&c->cert_file, p->path) || resolve(&c->key_file, p->path) ||
	    resolve(&c->client_ca_file, p->path))
		return -ENOMEM;
	return 0;
}

int bw_webcfg_parse(FILE *f, const char *path, struct bw_webcfg *c, char *why, size_t len)
{
	struct parse p = { .path = path, .why = why, .len = len };
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	int err;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->min_version = 12;
	c->prefer_server_ciphers = true;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(why, len, "%s:%lu: %s%s%s", path,
			 (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML",
			 parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	p.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	err = root ? each_pair(&p, root, "the file", top_pair, c) : 0;
	if (!err)
		err = check_tls(&p, c);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (err == -ENOMEM)
		snprintf(why, len, "out of memory");
	if (err)
		bw_webcfg_free(c);
	return err;
}

int bw_webcfg_load(const char *path, struct bw_webcfg *c, char *why, size_t len)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f) {
		err = -errno;
		snprintf(why, len, "%s: %s", path, strerror(errno));
		memset(c, 0, sizeof(*c));
		pthread_mutex_init(&c->lock, NULL);
		return err;
	}
	err = bw_webcfg_parse(f, path, c, why, len);
	fclose(f);
	return err;
}

static int slurp(const char *file, char **out, const char *path, int line, const char *key,
		 char *why, size_t len)
{
	FILE *f = fopen(file, "r");
	size_t n = 0, got;
	char *buf = NULL;

	if (!f) {
		snprintf(why, len, "%s:%d: %s %s: %s", path, line, key, file, strerror(errno));
		return -errno;
	}
	do {
		char *nb = realloc(buf, n + 4097);

		if (!nb) {
			free(buf);
			fclose(f);
			return -ENOMEM;
		}
		buf = nb;
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got == 4096 && n < (1 << 20));
	buf[n] = '\0';
	fclose(f);
	if (!strstr(buf, "-----BEGIN ")) {
		free(buf);
		snprintf(why, len, "%s:%d: %s %s: not PEM", path, line, key, file);
		return -EINVAL;
	}
	*out = buf;
	return 0;
}

int bw_webcfg_read_files(struct bw_webcfg *c, const char *path, char *why, size_t len)
{
	int err;

	if (!c->tls)
		return 0;
	err = slurp(c->cert_file, &c->cert_pem, path, c->cert_line, "cert_file", why, len);
	if (!err)
		err = slurp(c->key_file, &c->key_pem, path, c->cert_line, "key_file", why, len);
	if (!err && c->client_ca_file)
		err = slurp(c->client_ca_file, &c->ca_pem, path, c->cert_line, "client_ca_file",
			    why, len);
	return err;
}

static void free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

void bw_webcfg_free(struct bw_webcfg *c)
{
	int i;

	free(c->cert_file);
	free(c->key_file);
	free(c->client_ca_file);
	free(c->cert_pem);
	free_secret(c->key_pem);
	free(c->ca_pem);
	for (i = 0; i < c->nheaders; i++) {
		free(c->header_name[i]);
		free(c->header_value[i]);
	}
	for (i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
		free_secret(c->users[i].good);
	}
	free(c->users);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

static bool str_differs(const char *a, const char *b)
{
	return (!a != !b) || (a && strcmp(a, b));
}

bool bw_webcfg_tls_differs(const struct bw_webcfg *a, const struct bw_webcfg *b)
{
	return a->tls != b->tls || str_differs(a->cert_file, b->cert_file) ||
	       str_differs(a->key_file, b->key_file) ||
	       str_differs(a->client_ca_file, b->client_ca_file) ||
	       a->client_auth != b->client_auth || a->min_version != b->min_version ||
	       a->max_version != b->max_version ||
	       a->prefer_server_ciphers != b->prefer_server_ciphers;
}

/* Equal strings, in a time that does not depend on where they differ. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

/* A hash that matches nothing, so an unknown user costs a bcrypt as a known one does. */
static const char dummy_hash[] = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

bool bw_webcfg_auth(struct bw_webcfg *c, const char *user, const char *password)
{
	struct crypt_data *cd;
	struct bw_web_user *u = NULL;
	const char *h;
	bool ok = false;
	int i;

	if (!c->nusers)
		return true;
	if (!user || !password)
		return false;
	for (i = 0; i < c->nusers; i++)
		if (!strcmp(c->users[i].name, user))
			u = &c->users[i];
	if (u) {
		pthread_mutex_lock(&c->lock);
		ok = u->good && same(u->good, password);
		pthread_mutex_unlock(&c->lock);
		if (ok)
			return true;
	}
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	h = crypt_r(password, u ? u->hash : dummy_hash, cd);
	ok = u && h && h[0] != '*' && same(h, u->hash);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok) {
		char *g = strdup(password);

		pthread_mutex_lock(&c->lock);
		free_secret(u->good);
		u->good = g;
		pthread_mutex_unlock(&c->lock);
	}
	return ok;
}

void bw_webcfg_priorities(const struct bw_webcfg *c, char *buf, size_t len)
{
	int v, max = c->max_version ? c->max_version : 13;
	size_t n;

	n = snprintf(buf, len, "NORMAL:-VERS-ALL");
	for (v = max; v >= c->min_version && n < len; v--)
		n += snprintf(buf + n, len - n, ":+VERS-TLS1.%d", v - 10);
	/*
	 * exporter-toolkit's (Go's) groups, in its order: X25519 first.  With
	 * GnuTLS's own order (P-256 first) and the server's preference, every
	 * TLS 1.3 client that sends an X25519 key share (OpenSSL, Go) got a
	 * HelloRetryRequest, a round trip more; and Debian 12's libmicrohttpd
	 * 0.9.75 with GnuTLS 3.7.9 failed about 1 retried handshake in 4,000.
	 */
	if (n < len)
		n += snprintf(buf + n, len - n, "%s", BW_TLS_GROUPS);
	if (c->prefer_server_ciphers && n < len)
		snprintf(buf + n, len - n, ":%%SERVER_PRECEDENCE");
}
