/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's parts (user/export/): the server (export.c: page, HTTP,
 * web config, the sampling loop), libmicrohttpd and GnuTLS opened at run
 * time (mhd.c), the listening socket (listen.c), the drop of privileges
 * (privs.c); its command line is user/cmd/export.c's.
 */
#ifndef BLKWISE_EXPORT_H
#define BLKWISE_EXPORT_H

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include "tune/tuner.h"
#include "export/webcfg.h"

#define DEFAULT_PORT "9796"

struct export_args {
	struct bw_watch_opts w;
	struct bw_tuner_args t;
	bool tune;
	const char *listen;
	double interval;
	const char *user;
	bool bpf_stats;
	long max_conn, max_per_ip;
	const char *web_config;
	struct bw_cg_select cg;	/* with --cgroups */
	bool cg_given;		/* --cgroup-path or --cgroups-max */
};

/* export.c: serves until SIGTERM; an exit code (BW_EXIT_*). */
int bw_export(struct export_args *a);

/* mhd.c: libmicrohttpd (and, with tls, GnuTLS) opened; 0, or -1 after saying why. */
int bw_mhd_open(bool tls);
struct bw_mhd {
	typeof(MHD_start_daemon) *start_daemon;
	typeof(MHD_stop_daemon) *stop_daemon;
	typeof(MHD_create_response_from_buffer) *create_response_from_buffer;
	typeof(MHD_add_response_header) *add_response_header;
	typeof(MHD_queue_response) *queue_response;
	typeof(MHD_destroy_response) *destroy_response;
	typeof(MHD_lookup_connection_value) *lookup_connection_value;
	typeof(MHD_get_connection_info) *get_connection_info;
	typeof(MHD_set_connection_option) *set_connection_option;
	typeof(MHD_basic_auth_get_username_password) *basic_auth_get_username_password;
	typeof(MHD_queue_basic_auth_fail_response) *queue_basic_auth_fail_response;
	typeof(MHD_free) *free;
};
extern struct bw_mhd mhd;
struct bw_gnutls {
	typeof(gnutls_certificate_server_set_request) *certificate_server_set_request;
	typeof(gnutls_session_set_verify_cert) *session_set_verify_cert;
	typeof(gnutls_certificate_verify_peers2) *certificate_verify_peers2;
	typeof(gnutls_certificate_get_peers) *certificate_get_peers;
	typeof(gnutls_certificate_allocate_credentials) *certificate_allocate_credentials;
	typeof(gnutls_certificate_free_credentials) *certificate_free_credentials;
	typeof(gnutls_certificate_set_x509_key_mem) *certificate_set_x509_key_mem;
	typeof(gnutls_certificate_set_x509_trust_mem) *certificate_set_x509_trust_mem;
	typeof(gnutls_strerror) *strerror;
};
extern struct bw_gnutls gt;

/* listen.c */
/* The listening socket; -EINVAL for a bad --listen (said), other -errno (said). */
int bw_listen_open(const char *spec);
/* RLIMIT_NOFILE raised for --max-connections, else fewer connections (said). */
void bw_listen_fit_nofile(struct export_args *a);

/* privs.c */
/* Becomes user, keeping only what reading the held maps still needs. */
int bw_privs_drop(const char *user);
/* The S1 store kept writable after the drop (a keeper process). */
void bw_privs_keep_store(const struct export_args *a);

#endif /* BLKWISE_EXPORT_H */
