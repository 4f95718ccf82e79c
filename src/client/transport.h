#ifndef KINF_TRANSPORT_H
#define KINF_TRANSPORT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The connections to one server, shared by an HTTP client and its clones
 * (http.h). When the server speaks HTTP/2 (ALPN h2, as the API server
 * does) one libcurl multi handle, driven by a thread of its own, runs the
 * requests of all of them: streams on one TCP connection, as client-go's
 * are. Over HTTP/1.1 each client (each stream here) has a connection of
 * its own, kept alive for its next request, as before. (libcurl
 * multiplexes only the transfers of one multi handle: a share of its
 * connection cache between easy handles in several threads does not,
 * curl_share_setopt(3).)
 *
 * Threads: a request's caller blocks in kinf_transport_perform() and gets
 * the body there, in its own thread. Over HTTP/2 the transport's thread
 * receives and only queues the bytes, so a slow consumer holds up no other
 * stream. An HTTP/2 stream is never paused: libcurl 7.88 stops reading the
 * whole connection while a paused stream's data is waiting, so one slow
 * consumer would hold up every stream (and a consumer that waits for
 * another stream of the connection, as the list's second lane does, would
 * wait for ever); its bytes wait in memory instead, up to a backstop
 * (KINF_TRANSPORT_H2_QUEUE_MAX says what bounds them). Over HTTP/1.1 the
 * request runs in its caller's thread, on a connection of the caller's
 * own, read as fast as the caller consumes (TCP holds the rest): no
 * thread, queue or pause in between. Which version a server speaks is
 * known from the URL (http://: HTTP/1.1) or from its first answer; until
 * then one request at a time goes out (transport.c says why), through the
 * thread; if that probe finds HTTP/1.1, it is paused whenever its caller
 * falls KINF_TRANSPORT_PAUSE_BYTES behind.
 *
 * Locks: the transport's (its queue of requests to add, unpause or
 * remove, what it knows of the server's version) and each stream's (its
 * queued bytes and state). Both are leaves: nothing else is taken, and no
 * hook runs, while one is held.
 */
struct kinf_transport;

/*
 * An HTTP/1.1 request through the thread (the probe): the bytes queued for
 * a slow caller before it pauses. Its queue then takes 512 KiB, allocated
 * at once past 64 KiB.
 */
#define KINF_TRANSPORT_PAUSE_BYTES ((size_t)448 << 10)

/*
 * What bounds an HTTP/2 stream's queue, which is never paused: its
 * consumer. kinf's never wait for long but in one place, the list's lane
 * whose page comes after the other lane's, and that waits for one page at
 * most (the list's chunk size in objects). This is the backstop beyond
 * that: the transfer fails (CURLE_FILESIZE_EXCEEDED) rather than stall the
 * connection's other streams or take all memory.
 */
#define KINF_TRANSPORT_H2_QUEUE_MAX ((size_t)256 << 20)

/*
 * A transport with no connection yet; its thread starts with the first
 * request that needs it. http1: the server is known to speak HTTP/1.1 only
 * (an http:// URL, when HTTP/2 is asked for over TLS only).
 */
struct kinf_transport *kinf_transport_new(bool http1);
struct kinf_transport *kinf_transport_ref(struct kinf_transport *t);
/* Drop a reference; the last one ends the thread and closes the connections. */
struct kinf_transport *kinf_transport_unref(struct kinf_transport *t);

/*
 * One easy handle's requests through t, one at a time: a client's. Takes
 * a reference on t; easy is borrowed (freed after the stream) and gets its
 * write and header callbacks and private pointer from here,
 * CURLOPT_PIPEWAIT (wait for a connection being set up rather than open
 * another that HTTP/2 might not need), and is otherwise the caller's to set
 * up between requests.
 */
struct kinf_transport_stream *kinf_transport_stream_new(struct kinf_transport *t,
		CURL *easy);
void kinf_transport_stream_free(struct kinf_transport_stream *s);

struct kinf_transport_hooks {
	/*
	 * Each header line, as CURLOPT_HEADERFUNCTION, in the thread that runs
	 * the transfer (the transport's or the caller's); may be NULL.
	 */
	size_t (*header)(char *data, size_t size, size_t nmemb, void *userdata);
	/* Each run of body bytes, in order: 0, or < 0 to end the transfer. */
	int (*body)(const char *data, size_t len, void *userdata);
	/*
	 * Asked between waits (at least every second, and at once after
	 * kinf_transport_stream_wake): 0, or < 0 to end the transfer.
	 */
	int (*check)(void *userdata);
	void *userdata;
};

/*
 * Run the request set up on the stream's easy handle to its end, calling
 * the body and check hooks in this thread.
 * Returns libcurl's result, CURLE_FILESIZE_EXCEEDED for an HTTP/2 stream
 * whose consumer fell KINF_TRANSPORT_H2_QUEUE_MAX behind, or
 * CURLE_ABORTED_BY_CALLBACK with what a hook returned in *ret_abort (else 0
 * there). The easy handle is out of the multi handle again on return:
 * curl_easy_getinfo() may be asked.
 */
CURLcode kinf_transport_perform(struct kinf_transport_stream *s,
		const struct kinf_transport_hooks *hooks, int *ret_abort);

/* Have the check hook asked at once. Any thread, also between requests. */
void kinf_transport_stream_wake(struct kinf_transport_stream *s);

#endif
