/* settings.h — the web UI's saved configurations, in pprof's own settings
 * file and format (google/pprof internal/driver/settings.go, config.go), so
 * that go tool pprof and cprof share them: $XDG_CONFIG_HOME/pprof/
 * settings.json, else ~/.config/pprof/settings.json, holding
 * {"configs": [{"name": ..., <the saved fields>}, ...]} indented by two
 * spaces, each field omitted when zero/false/empty, as Go's encoding/json
 * writes it. Saved fields are the configuration's display and filter
 * settings (settings_saved); output, source_path, trim_path, sample_index
 * and divide_by are not saved.
 *
 * One caller at a time (the web server serializes requests). Errors are
 * returned with pprof's words in err. */
#ifndef CPROF_TOOL_SETTINGS_H
#define CPROF_TOOL_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "tool/report/options.h"

typedef struct {
    char *name;
    config_t cfg; /* the file's fields; those it leaves out are zero, as in Go */
} settings_entry_t;

typedef struct {
    settings_entry_t *v;
    size_t n;
} settings_t;

/* Whether the configuration field f is kept in the settings file. */
bool settings_saved(const opt_field_t *f);

/* The settings file's path into buf; -ENOENT when neither
 * $XDG_CONFIG_HOME nor $HOME is set. */
int settings_path(char *buf, size_t n);

/* Reads the file (no file: no configurations). 0 or a negative errno. */
int settings_read(const char *path, settings_t *s, char *err, size_t errlen);
void settings_free(settings_t *s);

/* Saves cfg under name (replacing a configuration of that name, else
 * appended), or deletes the configuration name ("config NAME not found"). */
int settings_save(const char *path, const char *name, const config_t *cfg, char *err, size_t errlen);
int settings_delete(const char *path, const char *name, char *err, size_t errlen);

#endif
