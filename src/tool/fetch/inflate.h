/* inflate.h — a gzip'd profile inflated on a second thread while the
 * caller's thread decodes it (profile_read_file_with's inflater): inflate
 * took 13% of -top on a 17 MB profile, the decode about as much again.
 *
 * The worker reads the file's zread_t into blocks of 64 KiB, at most four
 * ahead of the decoder (a fetch/ahead.h queue), so memory stays bounded;
 * errors come to the decoder in order, with zread's words. Threads: one
 * inflater belongs to the thread that reads the file; a machine of one CPU
 * reads on that thread. */
#ifndef CPROF_TOOL_INFLATE_H
#define CPROF_TOOL_INFLATE_H

#include "profile/parse.h"

typedef struct inflater inflater_t;

/* A new inflater as profile_read_file_with takes it in *out; NULL on OOM
 * or with one CPU (then read without one). */
inflater_t *inflater_new(profile_inflater_t *out);

void inflater_free(inflater_t *in);

#endif
