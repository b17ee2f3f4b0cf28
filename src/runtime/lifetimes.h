/* lifetimes.h — the lifetime profile (CPROF_LIFETIME_PROFILE,
 * /debug/pprof/lifetimes), as tcmalloc's kLifetimes: from the flight
 * recorder's events (flightrec.h), per allocation stack, how many sampled
 * objects lived how long, labelled freed=same-thread|other-thread|live.
 * An object still live is right-censored: its lifetime runs to the time
 * the profile is written. A free whose allocation left the ring is not
 * counted (its lifetime is unknown).
 *
 * Sample types objects/count and lifetime/nanoseconds (the lifetimes
 * summed), each scaled as the heap profile is (a sampled object stands for
 * 1/p objects). Each sample also carries the numeric label lifetime (unit
 * nanoseconds): the lower edge of its histogram bin, a sixteenth of an
 * octave wide (LIFETIMES_BINS_PER_OCTAVE), so medians and histograms can
 * be read from it within 4.4%.
 *
 * Threads: written by ordinary threads with the guard set (profiles.h);
 * needs CPROF_RECORD (without it, an empty profile that says so). "Same
 * thread" compares the thread ids' low 16 bits. */
#ifndef CPROF_LIFETIMES_H
#define CPROF_LIFETIMES_H

#define LIFETIMES_BINS_PER_OCTAVE 16

/* debug 0: gzipped profile.proto; 1: text, one line per sample. 0 or a
 * negative errno. */
int lifetimes_write(int fd, int debug);

#endif
