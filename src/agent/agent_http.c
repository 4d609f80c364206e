// SPDX-License-Identifier: MIT
/*
 * The agent's HTTP side, on libmicrohttpd (Debian's libmicrohttpd-dev):
 * its parser, its connection handling and its limits, rather than a
 * parser of our own. One internal thread polls every connection, so a
 * client that sends nothing, or reads nothing, holds a connection slot
 * until its timeout and nothing else: no thread is blocked on it.
 * Limits: 5 s without progress closes a connection; 64 connections, 8
 * from one address; 16 KiB of memory per connection, which bounds a
 * request's line and headers (a bigger one gets 431 and is closed); GET
 * and HEAD only, no body read. The socket is bound by agent.c (its error,
 * port in use or not, is said before BPF loads).
 *
 * The library is opened when the agent starts (agent_http_open), not
 * linked into peakbpf: it brings GnuTLS and eight more libraries, whose
 * loading and constructors were ~2.5 ms of every peakbpf command's
 * start-up, the agent's or not (docs/performance.md, "Start-up through the
 * helper"). The header still declares each call, so each pointer has the
 * call's own type.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "agent_int.h"

/* Debian's libmicrohttpd12: the soname libmicrohttpd-dev links against. */
#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
} mhd;

#define MHD_CALL(name) { #name, (void **)&mhd.name }
static const struct {
	const char *name;
	void **fn;
} mhd_calls[] = {
	MHD_CALL(create_response_from_buffer), MHD_CALL(add_response_header), MHD_CALL(queue_response),
	MHD_CALL(destroy_response), MHD_CALL(lookup_connection_value), MHD_CALL(start_daemon),
	MHD_CALL(stop_daemon),
};

#define CONN_TIMEOUT_S 5
#define CONN_LIMIT 64
/* Half the connections from one address: the scraper's address is most
 * often loopback, shared with every local user, so a per-address limit as
 * small as a remote client's would let 8 stalled local connections lock
 * Prometheus out (t_agent_hostile_http). */
#define PER_IP_LIMIT 32
#define CONN_MEMORY (16 * 1024)

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(r, "Cache-Control", "no-store");
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result metrics(struct agent *a, struct MHD_Connection *c)
{
	const char *scraper = mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "scraper");
	size_t len = 0;
	int err = 0;
	char *body = agent_scrape(a, scraper, &len, &err);

	if (!body)
		return err == -EINVAL ? text(c, MHD_HTTP_BAD_REQUEST, "scraper: 1 to 32 of [A-Za-z0-9_.-]\n")
				      : text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the scrape failed\n");
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload, size_t *upload_size, void **req)
{
	struct agent *a = cls;
	size_t len = 0;
	char *body;

	(void)version;
	(void)upload;
	(void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (*upload_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "no body\n");
	if (!strcmp(url, "/metrics"))
		return metrics(a, c);
	if (!strcmp(url, "/oom")) {
		body = agent_oom_list_json(a, &len);
		return body ? reply(c, MHD_HTTP_OK, "application/json", body, len, MHD_RESPMEM_MUST_FREE)
			    : text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "listing failed\n");
	}
	if (!strcmp(url, "/holders")) {
		body = agent_holders_json(a, mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cgroup"), &len);
		return body ? reply(c, MHD_HTTP_OK, "application/json", body, len, MHD_RESPMEM_MUST_FREE)
			    : text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "listing failed\n");
	}
	if (!strcmp(url, "/healthz"))
		return text(c, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/"))
		return text(c, MHD_HTTP_OK, "peakbpf agent: GET /metrics[?scraper=NAME], /holders[?cgroup=PATH], /oom, /healthz\n");
	return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

int agent_http_open(char *why, size_t why_len)
{
	static void *lib;
	char sym[64];
	size_t i;

	if (lib)
		return 0;
	lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, why_len, "cannot open %s, the HTTP server (apt-get install libmicrohttpd12): %s",
			 MHD_SONAME, dlerror());
		return -ENOENT;
	}
	for (i = 0; i < sizeof(mhd_calls) / sizeof(mhd_calls[0]); i++) {
		snprintf(sym, sizeof(sym), "MHD_%s", mhd_calls[i].name);
		*mhd_calls[i].fn = dlsym(lib, sym);
		if (!*mhd_calls[i].fn) {
			snprintf(why, why_len, "%s has no %s (libmicrohttpd 0.9.75 or later is needed)", MHD_SONAME, sym);
			dlclose(lib);
			lib = NULL;
			return -ENOENT;
		}
	}
	return 0;
}

int agent_http_start(struct agent *a)
{
	a->httpd = mhd.start_daemon(MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, handler, a,
				    MHD_OPTION_LISTEN_SOCKET, a->lfd,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PER_IP_LIMIT,
				    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				    MHD_OPTION_END);
	return a->httpd ? 0 : -EIO;
}

void agent_http_stop(struct agent *a)
{
	if (a->httpd)
		mhd.stop_daemon(a->httpd);
	a->httpd = NULL;
}
