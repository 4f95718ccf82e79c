/*
 * The clients of bench/run's serve scenario (issue 17), on libcurl alone
 * (no kinf code, so that the figures are serve's and not a kinf client's).
 *
 *   serve-client get URL CA TOKEN N
 *       N GETs of URL on one easy handle: one TLS connection kept alive
 *       (the connections opened are counted and printed). Prints one JSON
 *       line: n, connects, bytes of the last answer, p50/p90/p99/max in
 *       microseconds (from the request to the last byte).
 *   serve-client probe URL CA TOKEN SECONDS INTERVAL_MS fresh|kept
 *       GETs of URL every INTERVAL_MS for SECONDS, each on a new TLS
 *       connection (fresh: as kubelet's probes, which keep none) or all on
 *       one (kept); TOKEN "-" sends none. One JSON line: n, failures (no
 *       answer or not 200), p50/p90/p99/max in microseconds.
 *   serve-client watch URL CA TOKEN CLIENTS EVENTS
 *       CLIENTS watch streams of URL at once (one process, curl multi, one
 *       connection each), each read until it has EVENTS events other than
 *       BOOKMARK, or it ends, or no stream has had a byte for 30 s (a
 *       stall: what each got is still printed). One JSON line per client: its events,
 *       the seconds from its first to its last event, and whether the
 *       stream ended with an ERROR event (and that event's code).
 * Run: ninja -C build bench/serve-client
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static CURL *handle(const char *url, const char *ca, struct curl_slist *hdrs) {
	CURL *c = curl_easy_init();
	if (!c) {
		fprintf(stderr, "serve-client: curl_easy_init failed\n");
		exit(2);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	return c;
}

static size_t count_bytes(char *p, size_t size, size_t n, void *ud) {
	(void)p;
	*(size_t *)ud += size * n;
	return size * n;
}

static int run_get(const char *url, const char *ca, struct curl_slist *hdrs, int n) {
	CURL *c = handle(url, ca, hdrs);
	size_t bytes = 0;
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, count_bytes);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &bytes);
	double *lat = malloc(sizeof(*lat) * (size_t)n);
	long connects = 0;
	if (!lat) {
		return 2;
	}
	for (int i = 0; i < n; i++) {
		bytes = 0;
		double t0 = now();
		CURLcode rc = curl_easy_perform(c);
		lat[i] = (now() - t0) * 1e6;
		long code = 0, nc = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &nc);
		connects += nc;
		if (rc != CURLE_OK || code != 200) {
			fprintf(stderr, "serve-client: GET %s: %s, HTTP %ld\n", url, curl_easy_strerror(rc),
					code);
			free(lat);
			curl_easy_cleanup(c);
			return 1;
		}
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp_double);
	printf("{\"n\":%d,\"connects\":%ld,\"bytes\":%zu,\"p50_us\":%.1f,\"p90_us\":%.1f,"
			"\"p99_us\":%.1f,\"max_us\":%.1f,\"min_us\":%.1f}\n",
			n, connects, bytes, lat[n / 2], lat[(size_t)(n * 0.90)], lat[(size_t)(n * 0.99)],
			lat[n - 1], lat[0]);
	free(lat);
	curl_easy_cleanup(c);
	return 0;
}

static void sleep_s(double s) {
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

static int run_probe(const char *url, const char *ca, struct curl_slist *hdrs, double seconds,
		double interval_ms, int fresh) {
	size_t cap = (size_t)(seconds * 1000 / (interval_ms > 0 ? interval_ms : 1)) + 16, n = 0;
	double *lat = malloc(sizeof(*lat) * cap);
	size_t bytes = 0;
	long failures = 0;
	CURL *c = handle(url, ca, hdrs);
	if (!lat) {
		return 2;
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, count_bytes);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &bytes);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	if (fresh) {
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
	}
	double end = now() + seconds;
	while (now() < end && n < cap) {
		double t0 = now();
		CURLcode rc = curl_easy_perform(c);
		long code = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		lat[n++] = (now() - t0) * 1e6;
		failures += rc != CURLE_OK || code != 200;
		sleep_s(interval_ms / 1000);
	}
	if (!n) {
		lat[n++] = 0;
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("{\"n\":%zu,\"failures\":%ld,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,"
			"\"max_us\":%.1f}\n", n, failures, lat[n / 2], lat[(size_t)((double)n * 0.90)],
			lat[(size_t)((double)n * 0.99)], lat[n - 1]);
	free(lat);
	curl_easy_cleanup(c);
	return 0;
}

struct stream {
	CURL *c;
	long events;
	long want;
	double first, last;
	int error;      /* an ERROR event came */
	long error_code;
	char line[256]; /* the start of the current line */
	size_t line_len;
	int in_line;
	CURLcode result;	/* how the transfer ended (a write error: ended here, done) */
};

/* One complete line's start (up to sizeof line): its type. */
static void stream_line(struct stream *s) {
	const char *t = strstr(s->line, "\"type\":\"");
	if (!t) {
		return;
	}
	t += 8;
	if (strncmp(t, "BOOKMARK", 8) == 0) {
		return;
	}
	if (strncmp(t, "ERROR", 5) == 0) {
		s->error = 1;
		const char *code = strstr(s->line, "\"code\":");
		s->error_code = code ? strtol(code + 7, NULL, 10) : 0;
		return;
	}
	double t1 = now();
	if (s->events++ == 0) {
		s->first = t1;
	}
	s->last = t1;
}

static double last_byte;	/* when any stream last had data */

static size_t stream_write(char *p, size_t size, size_t n, void *ud) {
	struct stream *s = ud;
	size_t len = size * n;
	last_byte = now();
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\n') {
			s->line[s->line_len] = '\0';
			stream_line(s);
			s->line_len = 0;
			if (s->events >= s->want || s->error) {
				return 0;    /* done: end this transfer (a short write) */
			}
			continue;
		}
		if (s->line_len < sizeof(s->line) - 1) {
			s->line[s->line_len++] = p[i];
		}
	}
	return len;
}

static int run_watch(const char *url, const char *ca, struct curl_slist *hdrs, int clients,
		long events) {
	CURLM *m = curl_multi_init();
	struct stream *ss = calloc((size_t)clients, sizeof(*ss));
	if (!m || !ss) {
		return 2;
	}
	for (int i = 0; i < clients; i++) {
		ss[i].want = events;
		ss[i].c = handle(url, ca, hdrs);
		curl_easy_setopt(ss[i].c, CURLOPT_WRITEFUNCTION, stream_write);
		curl_easy_setopt(ss[i].c, CURLOPT_WRITEDATA, &ss[i]);
		curl_multi_add_handle(m, ss[i].c);
	}
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)clients);
	int running = 1;
	last_byte = now();
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK || now() - last_byte > 30) {
			break;
		}
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			for (int i = 0; msg->msg == CURLMSG_DONE && i < clients; i++) {
				if (ss[i].c == msg->easy_handle) {
					ss[i].result = msg->data.result;
				}
			}
		}
		if (running) {
			curl_multi_poll(m, NULL, 0, 1000, NULL);
		}
	}
	for (int i = 0; i < clients; i++) {
		long code = 0;
		curl_easy_getinfo(ss[i].c, CURLINFO_RESPONSE_CODE, &code);
		printf("{\"client\":%d,\"status\":%ld,\"events\":%ld,\"seconds\":%.6f,\"error\":%s,"
				"\"error_code\":%ld,\"curl\":\"%s\"}\n", i, code, ss[i].events,
				ss[i].last - ss[i].first, ss[i].error ? "true" : "false", ss[i].error_code,
				ss[i].result == CURLE_WRITE_ERROR ? "" : curl_easy_strerror(ss[i].result));
		curl_multi_remove_handle(m, ss[i].c);
		curl_easy_cleanup(ss[i].c);
	}
	free(ss);
	curl_multi_cleanup(m);
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 6 || (strcmp(argv[1], "get") == 0 ? argc != 6 :
				strcmp(argv[1], "watch") == 0 ? argc != 7 :
				strcmp(argv[1], "probe") == 0 ? argc != 8 : 1)) {
		fprintf(stderr, "usage: serve-client get URL CA TOKEN N\n"
				"       serve-client probe URL CA TOKEN SECONDS INTERVAL_MS fresh|kept\n"
				"       serve-client watch URL CA TOKEN CLIENTS EVENTS\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	char auth[4096];
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", argv[4]);
	struct curl_slist *hdrs = strcmp(argv[4], "-") ? curl_slist_append(NULL, auth) : NULL;
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	int rc;
	if (strcmp(argv[1], "get") == 0) {
		rc = run_get(argv[2], argv[3], hdrs, atoi(argv[5]));
	} else if (strcmp(argv[1], "probe") == 0) {
		rc = run_probe(argv[2], argv[3], hdrs, atof(argv[5]), atof(argv[6]),
				strcmp(argv[7], "fresh") == 0);
	} else {
		rc = run_watch(argv[2], argv[3], hdrs, atoi(argv[5]), atol(argv[6]));
	}
	curl_slist_free_all(hdrs);
	curl_global_cleanup();
	return rc;
}
