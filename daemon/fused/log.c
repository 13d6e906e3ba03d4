// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Daemon messages, each escaped as a whole (famfs_escape()). Under
 * systemd stderr is the journal: a "<N>" prefix gives each line its
 * priority. In a terminal or a log file the level is
 * spelled out. Once detached from the terminal we use syslog, which is
 * the journal on a systemd host.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fused.h"

static bool journal, use_syslog;
static int max_level = L_INFO;
static FILE *logf;

uint64_t fused_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t fused_now_ms(void)
{
	return fused_now_us() / 1000;
}

int fused_log_get_level(void)
{
	return max_level;
}

void fused_log_set_level(int level)
{
	max_level = level;
}

void fused_log_init(bool debug, const char *logfile)
{
	max_level = debug ? L_DEBUG : L_INFO;
	journal = getenv("JOURNAL_STREAM") != NULL;
	if (logfile && *logfile) {
		logf = fopen(logfile, "a");
		if (logf)
			setvbuf(logf, NULL, _IOLBF, 0);
		else
			fprintf(stderr, "famfs-fused: cannot open log file %s\n",
				logfile);
	}
}

bool fused_log_on_stderr(void)
{
	return !logf && !use_syslog;
}

void fused_log_detach(void)
{
	if (logf || journal)
		return;
	openlog("famfs-fused", LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

static const char *level_name(enum fused_level lvl)
{
	switch (lvl) {
	case L_ERR:
		return "error";
	case L_WARN:
		return "warning";
	case L_NOTICE:
		return "notice";
	case L_INFO:
		return "info";
	default:
		return "debug";
	}
}

void fused_log(enum fused_level lvl, const char *fmt, ...)
{
	char raw[1024], msg[FAMFS_ESCAPED_LEN(sizeof(raw))];
	va_list ap;

	if ((int)lvl > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/*
	 * Names in messages come from the log and from mount points: one
	 * line each, whatever they hold (under journald a newline would
	 * start a line of its own with a priority of its choosing).
	 */
	famfs_escape(raw, msg, sizeof(msg));

	if (logf) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(logf, "%lld.%03ld famfs-fused[%d]: %s: %s\n",
			(long long)ts.tv_sec, ts.tv_nsec / 1000000,
			(int)getpid(), level_name(lvl), msg);
	} else if (use_syslog) {
		syslog((int)lvl, "%s", msg);
	} else if (journal) {
		fprintf(stderr, "<%d>%s\n", (int)lvl, msg);
	} else {
		fprintf(stderr, "famfs-fused: %s: %s\n", level_name(lvl), msg);
	}
}
