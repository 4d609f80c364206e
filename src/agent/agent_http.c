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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "agent_int.h"

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
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result metrics(struct agent *a, struct MHD_Connection *c)
{
	const char *scraper = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "scraper");
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
		body = agent_holders_json(a, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cgroup"), &len);
		return body ? reply(c, MHD_HTTP_OK, "application/json", body, len, MHD_RESPMEM_MUST_FREE)
			    : text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "listing failed\n");
	}
	if (!strcmp(url, "/healthz"))
		return text(c, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/"))
		return text(c, MHD_HTTP_OK, "peakbpf agent: GET /metrics[?scraper=NAME], /holders[?cgroup=PATH], /oom, /healthz\n");
	return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

int agent_http_start(struct agent *a)
{
	a->httpd = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, handler, a,
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
		MHD_stop_daemon(a->httpd);
	a->httpd = NULL;
}
