// SPDX-License-Identifier: GPL-2.0
/*
 * libmicrohttpd is opened here, not linked: it brings GnuTLS and its
 * libraries, 2.4 MiB of resident memory every other subcommand would
 * carry for nothing.  GnuTLS itself (already loaded by libmicrohttpd) is
 * opened the same way, for what libmicrohttpd leaves to its caller: the
 * client certificate policy of a TLS session and its verification.
 */
#include <dlfcn.h>
#include "export/export.h"

#define MHD_SONAME "libmicrohttpd.so.12"
#define GNUTLS_SONAME "libgnutls.so.30"

struct bw_mhd mhd;
struct bw_gnutls gt;

int bw_mhd_open(bool tls)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		bw_err("export needs %s: %s; install it with apt-get install libmicrohttpd12",
		       MHD_SONAME, dlerror());
		return -1;
	}
#define MHD_SYM(f) (*(void **)&mhd.f = dlsym(h, "MHD_" #f))
	if (!MHD_SYM(start_daemon) || !MHD_SYM(stop_daemon) ||
	    !MHD_SYM(create_response_from_buffer) || !MHD_SYM(add_response_header) ||
	    !MHD_SYM(queue_response) || !MHD_SYM(destroy_response) ||
	    !MHD_SYM(lookup_connection_value) || !MHD_SYM(get_connection_info) ||
	    !MHD_SYM(set_connection_option) || !MHD_SYM(basic_auth_get_username_password) ||
	    !MHD_SYM(queue_basic_auth_fail_response) || !MHD_SYM(free)) {
		bw_err("%s lacks a function export uses: %s", MHD_SONAME, dlerror());
		return -1;
	}
#undef MHD_SYM
	if (!tls)
		return 0;
	h = dlopen(GNUTLS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		bw_err("TLS needs %s: %s; install it with apt-get install libgnutls30",
		       GNUTLS_SONAME, dlerror());
		return -1;
	}
#define GT_SYM(f) (*(void **)&gt.f = dlsym(h, "gnutls_" #f))
	if (!GT_SYM(certificate_server_set_request) || !GT_SYM(session_set_verify_cert) ||
	    !GT_SYM(certificate_verify_peers2) || !GT_SYM(certificate_get_peers) ||
	    !GT_SYM(certificate_allocate_credentials) || !GT_SYM(certificate_free_credentials) ||
	    !GT_SYM(certificate_set_x509_key_mem) || !GT_SYM(certificate_set_x509_trust_mem) ||
	    !GT_SYM(strerror)) {
		bw_err("%s lacks a function export uses: %s", GNUTLS_SONAME, dlerror());
		return -1;
	}
#undef GT_SYM
	return 0;
}
