/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The web configuration file of Prometheus' exporter-toolkit
 * (--web.config.file): TLS, client certificates, basic auth users with
 * bcrypt hashes, extra response headers.  Parsed with libyaml; passwords
 * checked with libxcrypt's crypt_r.
 */
#ifndef BLKWISE_WEBCFG_H
#define BLKWISE_WEBCFG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

/* exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType). */
enum bw_client_auth {
	BW_NO_CLIENT_CERT,
	BW_REQUEST_CLIENT_CERT,
	BW_REQUIRE_ANY_CLIENT_CERT,
	BW_VERIFY_CLIENT_CERT_IF_GIVEN,
	BW_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

#define BW_WEB_MAX_HEADERS 5

struct bw_web_user {
	char *name, *hash;
	char *good;		/* the last password that matched (bcrypt is slow) */
};

struct bw_webcfg {
	bool tls;
	char *cert_file, *key_file, *client_ca_file;	/* as resolved */
	int cert_line;				/* where tls_server_config starts */
	enum bw_client_auth client_auth;
	int min_version, max_version;		/* 10..13: TLS 1.0..1.3 */
	bool prefer_server_ciphers;
	char *cert_pem, *key_pem, *ca_pem;	/* the files' contents (bw_webcfg_read_files) */
	int nheaders;
	char *header_name[BW_WEB_MAX_HEADERS], *header_value[BW_WEB_MAX_HEADERS];
	int nusers;
	struct bw_web_user *users;
	pthread_mutex_t lock;			/* users[].good */
};

/*
 * Parses f (named path, for relative file names and messages).  On
 * error, returns -EINVAL with why set to "PATH:LINE: what".
 */
int bw_webcfg_parse(FILE *f, const char *path, struct bw_webcfg *c, char *why, size_t len);
/* bw_webcfg_parse of a file by name; -errno (why set) when it cannot be opened. */
int bw_webcfg_load(const char *path, struct bw_webcfg *c, char *why, size_t len);
/* Reads the certificate, key and client CA files into memory. */
int bw_webcfg_read_files(struct bw_webcfg *c, const char *path, char *why, size_t len);
void bw_webcfg_free(struct bw_webcfg *c);
/* true when TLS settings differ (they apply only at start). */
bool bw_webcfg_tls_differs(const struct bw_webcfg *a, const struct bw_webcfg *b);
/* Basic auth: true when no users are configured, or user and password match. */
bool bw_webcfg_auth(struct bw_webcfg *c, const char *user, const char *password);
/* GnuTLS priority string for the versions asked for. */
void bw_webcfg_priorities(const struct bw_webcfg *c, char *buf, size_t len);
const char *bw_client_auth_name(enum bw_client_auth a);

#endif /* BLKWISE_WEBCFG_H */
