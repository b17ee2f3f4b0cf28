/* push.h — pushing profiles to Pyroscope (or Grafana Alloy's
 * pyroscope.receive_http) with its /ingest protocol, for programs that end
 * before a scraper comes: CPROF_PUSH=http://HOST:PORT[/PATH].
 *
 * Every CPROF_PUSH_INTERVAL seconds (default 15) and once more at exit, the
 * CPU profile of the span since the last push (a delta: cpuprof.h's
 * cpu_delta_write, so the deltas add up to the run) and a snapshot of the
 * heap profile are each POSTed as a multipart form with the gzipped pprof
 * in its "profile" field, to PATH (default /ingest) with name=NAME{LABELS}
 * (CPROF_PUSH_NAME, default the program's name; CPROF_PUSH_LABELS static
 * labels), from, until and format=pprof. CPROF_PUSH_TOKEN sends a bearer
 * token, CPROF_PUSH_BASIC_AUTH=user:password Basic auth. Push owns the CPU
 * profiler for the run (as Go's Pyroscope SDK does): /debug/pprof/profile
 * and cprof_cpu_start get -EBUSY, unless CPROF_CPU_PROFILE already took it,
 * whose session the deltas then follow.
 *
 * Threads: a collector thread ("cprof-push") takes the profiles at the
 * interval into a bounded queue of memfds; a sender thread
 * ("cprof-push-tx") posts them over plain HTTP/1.1 sockets with timeouts.
 * Both block every signal and run guarded for their life. The program never
 * waits for either: a full queue drops its oldest profile; at exit the
 * queue gets at most PUSH_EXIT_WAIT_MS to empty. What was dropped or failed
 * is reported in one line at exit. A forked child does not push. */
#ifndef CPROF_PUSH_H
#define CPROF_PUSH_H

#include <stdbool.h>

/* How long exit waits for the queue to be delivered. */
#define PUSH_EXIT_WAIT_MS 2000

/* Called once from the runtime's constructor, after the CPU session of
 * CPROF_CPU_PROFILE (guard set): reads CPROF_PUSH*, starts the threads.
 * cpu_hz: the CPU profiler's rate, 0 if it cannot run; heap: the heap
 * profile's tables exist.
 * A bad variable prints one line naming it, and push stays off. */
void push_start_from_env(int cpu_hz, bool heap);

/* At exit, after session_fini(&session_cpu): the last profiles, the queue flushed (bounded),
 * and the one line about what was not delivered. */
void push_fini(void);

#endif
