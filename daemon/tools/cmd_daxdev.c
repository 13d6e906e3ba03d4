// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs daxdev: a famfs's devices, and where this host finds them. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "commands.h"
#include "tool_util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs daxdev [list] [-j] TARGET\n"
		"       famfs daxdev resolve FS_UUID DEV_UUID\n"
		"       famfs daxdev refresh [PATH...]\n"
		"\n"
		"list (the default): the devices of the famfs TARGET (a mount point or\n"
		"the primary device): index, uuid, size, the space its files use and\n"
		"leave free, and the path where this host finds it, or why it does not.\n"
		"Device 0 is the primary, which holds the log; the others were added by\n"
		"mkfs.famfs or famfs devadd.\n"
		"\n"
		"resolve: the path on this host of device DEV_UUID of famfs FS_UUID.\n"
		"\n"
		"refresh: rebuild the device map from what is there now: the places it\n"
		"names that still hold a device, every /dev/dax*, and each PATH (an image\n"
		"file, say, which is never looked for) that must hold one.\n"
		"\n"
		"Hosts find a device by the uuid in its superblock: first where they last\n"
		"found it (the device map, %s), then among\n"
		"the devdax nodes /dev/dax* whose driver lets them be read. Only a device\n"
		"or file that root alone can write is taken, and never one whose uuid a\n"
		"second device also carries.\n"
		"\n"
		"Options:\n"
		"  -j, --json      list as one JSON object: {\"uuid\", \"devices\": [{\"index\",\n"
		"                  \"uuid\", \"size\", \"used\", \"free\", \"present\", \"path\"}],\n"
		"                  \"missing\"}\n"
		"  -h, -?, --help  show this help\n"
		"\n"
		"Exit status:\n"
		"  0  every device is found (resolve: found)\n"
		"  1  a device is missing or not valid here, or TARGET is no famfs\n"
		"  2  usage error\n",
		famfs_devmap_path());
}

static int resolve(const char *fs_arg, const char *dev_arg)
{
	uint8_t fs_uuid[FAMFS_UUID_LEN], dev_uuid[FAMFS_UUID_LEN];
	char path[PATH_MAX];

	if (uuid_parse(fs_arg, fs_uuid) || uuid_parse(dev_arg, dev_uuid)) {
		fprintf(stderr, "famfs daxdev: resolve takes two uuids\n");
		return cli_usage_error(CLI_USAGE);
	}
	if (famfs_resolve_dev(fs_uuid, dev_uuid, path, sizeof(path))) {
		fprintf(stderr, "famfs daxdev: %s\n", famfs_errmsg());
		return CLI_FAIL;
	}
	printf("%s\n", path);
	return CLI_OK;
}

static int refresh(char *const *paths, int n)
{
	unsigned int found;

	if (famfs_devmap_refresh(paths, n, &found)) {
		fprintf(stderr, "famfs daxdev: %s\n", famfs_errmsg());
		return CLI_FAIL;
	}
	printf("%u device%s recorded in %s\n", found, found == 1 ? "" : "s",
	       famfs_devmap_path());
	return CLI_OK;
}

static void print_text(const struct famfs_fsck *r)
{
	char a[32], b[32], c[32], u[37];

	famfs_uuid_str(r->fs_uuid, u);
	printf("famfs %s: %u device%s%s\n", u, r->ndevs,
	       r->ndevs == 1 ? "" : "s", r->missing ? ", some missing" : "");
	for (uint32_t i = 0; i < r->ndevs; i++) {
		const struct famfs_fsck_dev *d = &r->devs[i];

		famfs_uuid_str(d->uuid, u);
		printf("  %2u  %s  %9s  used %9s  free %9s  %s\n", i, u,
		       human_size(d->size, a, sizeof(a)),
		       human_size(d->used, b, sizeof(b)),
		       human_size(d->free, c, sizeof(c)),
		       d->present ? d->path : "MISSING");
	}
	/* fsck's lines say why a device is missing */
	for (unsigned int i = 0; i < r->nproblems; i++)
		if (!strncmp(r->problems[i], "device ", 7))
			printf("  %s\n", r->problems[i]);
}

static void print_json(const struct famfs_fsck *r)
{
	struct json_object *o = json_object_new_object(), *a;
	char u[37];

	famfs_uuid_str(r->fs_uuid, u);
	jadd_str(o, "uuid", u);
	a = jadd_array(o, "devices");
	json_fs_devices(a, r);
	jadd_u64(o, "missing", r->missing);
	json_print(o);
}

static int list(const char *target, bool json)
{
	struct famfs_fsck *r = calloc(1, sizeof(*r));
	struct cli_fs fs;
	struct stat st;
	int rc;

	if (!r)
		return CLI_FAIL;
	rc = stat(target, &st) == 0 && S_ISDIR(st.st_mode) ?
		     cli_fs_open(&fs, NULL, target, false) :
		     cli_fs_open(&fs, target, "", false);
	if (rc) {
		free(r);
		return CLI_FAIL;
	}
	rc = famfs_fsck(&fs.dev, r);
	if (rc || !r->log_valid) {
		fprintf(stderr, "famfs daxdev: %s: %s\n", target,
			rc ? famfs_errmsg() : "the famfs is damaged (run famfs fsck)");
		rc = CLI_FAIL;
	} else {
		if (json)
			print_json(r);
		else
			print_text(r);
		rc = r->missing ? CLI_FAIL : CLI_OK;
	}
	cli_fs_close(&fs);
	free(r);
	return rc;
}

int cmd_daxdev(int argc, char **argv)
{
	bool json = false;
	const struct tool_opt opts[] = {
		OPT_FLAG('j', "json", &json),
		OPT_HELP_ALL,
		OPT_END,
	};
	const char *verb = "list";
	int code = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);

	if (code >= 0)
		return code;
	if (optind < argc && (!strcmp(argv[optind], "list") ||
			      !strcmp(argv[optind], "resolve") ||
			      !strcmp(argv[optind], "refresh")))
		verb = argv[optind++];
	if (!strcmp(verb, "refresh")) {
		if (json) {
			fprintf(stderr, "famfs daxdev: refresh takes no --json\n");
			return cli_usage_error(CLI_USAGE);
		}
		return refresh(argv + optind, argc - optind);
	}
	if (!strcmp(verb, "resolve")) {
		if (argc - optind != 2 || json) {
			fprintf(stderr, "famfs daxdev: resolve takes FS_UUID DEV_UUID\n");
			return cli_usage_error(CLI_USAGE);
		}
		return resolve(argv[optind], argv[optind + 1]);
	}
	if (argc - optind != 1) {
		fprintf(stderr, "famfs daxdev: %s\n",
			optind == argc ? "give a mount point or a device" :
					 "too many arguments");
		return cli_usage_error(CLI_USAGE);
	}
	return list(argv[optind], json);
}
