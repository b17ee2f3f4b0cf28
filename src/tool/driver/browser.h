/* browser.h — showing a file or URL to the user: in $BROWSER when set,
 * else with xdg-open when a display is available (DISPLAY or
 * WAYLAND_DISPLAY), as pprof's web command does. The viewer is started as a
 * child process with stdout/stderr inherited; nothing else is printed. */
#ifndef CPROF_TOOL_BROWSER_H
#define CPROF_TOOL_BROWSER_H

#include <stdbool.h>
#include <stddef.h>

/* Opens target (a path or an http:// URL). program: a specific viewer
 * ("eog", "gv --noantialias") tried alone, or NULL for the browser list.
 * wait: wait until the viewer exits (the command line does, as pprof;
 * the shell and the web server do not, and leave no zombie behind).
 * 0 when a viewer ran (and, with wait, exited 0); -ENOENT when no viewer
 * is available (the caller prints the path instead); other -errno, with
 * the command that failed and why in why ("chromium /tmp/x.svg: exit
 * status 1"; why may be NULL). */
int browser_open(const char *target, const char *program, bool wait, char *why, size_t n);

#endif
