// SPDX-License-Identifier: GPL-2.0
/*
 * mbox: messages between the two guests of the pair test, through an
 * ivshmem-plain PCI device whose memory (BAR 2) both QEMU processes map
 * from one host file. Static, no libraries; run in the guest.
 *
 *   mbox send CH TEXT          append message TEXT to channel CH (0 or 1)
 *   mbox recv CH N [SECONDS]   wait (default 60 s) until channel CH holds
 *                              message N (counted from 1), print its text
 *   mbox count CH              how many messages channel CH has had
 *
 * Each guest writes one channel and reads the other, so no two writers
 * ever touch the same bytes. A channel is a sequence counter followed by
 * a ring of slots; the text goes into its slot before the counter moves
 * (release store), and a reader reads the counter (acquire load) before
 * the text. A reader that falls a whole ring behind is told so.
 *
 * The memory is found by PCI IDs (1af4:1110) and mapped through its sysfs
 * resource2 file: no driver is needed in the guest.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PCI_DIR "/sys/bus/pci/devices"
#define SLOT 4096
#define SLOTS 63
#define CHANNEL (SLOT * (1 + SLOTS)) /* counter page + ring */
#define TEXT_MAX (SLOT - sizeof(uint32_t) - 1)

static int id_is(const char *dev, const char *file, const char *want)
{
	char p[512], v[32] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", PCI_DIR, dev, file);
	f = fopen(p, "r");
	if (!f)
		return 0;
	if (!fgets(v, sizeof(v), f))
		v[0] = '\0';
	fclose(f);
	return !strncmp(v, want, strlen(want));
}

/* Map the shared memory of the first ivshmem device. */
static uint8_t *shared_mem(void)
{
	DIR *d = opendir(PCI_DIR);
	struct dirent *e;
	char p[512];
	uint8_t *m;
	int fd;

	if (!d) {
		perror("mbox: " PCI_DIR);
		exit(2);
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !id_is(e->d_name, "vendor", "0x1af4") ||
		    !id_is(e->d_name, "device", "0x1110"))
			continue;
		/* Memory decoding on (the firmware usually did it already). */
		snprintf(p, sizeof(p), "%s/%s/enable", PCI_DIR, e->d_name);
		fd = open(p, O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "1", 1) < 0)
				perror("mbox: enable");
			close(fd);
		}
		snprintf(p, sizeof(p), "%s/%s/resource2", PCI_DIR, e->d_name);
		closedir(d);
		fd = open(p, O_RDWR | O_SYNC);
		if (fd < 0) {
			perror(p);
			exit(2);
		}
		m = mmap(NULL, 2 * CHANNEL, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (m == MAP_FAILED) {
			perror("mbox: mmap resource2");
			exit(2);
		}
		close(fd);
		return m;
	}
	closedir(d);
	fprintf(stderr, "mbox: no ivshmem device (1af4:1110)\n");
	exit(2);
}

static uint8_t *channel(const char *s)
{
	if (strcmp(s, "0") && strcmp(s, "1")) {
		fprintf(stderr, "mbox: channel must be 0 or 1, not %s\n", s);
		exit(2);
	}
	return shared_mem() + (size_t)atoi(s) * CHANNEL;
}

static uint64_t *counter(uint8_t *ch)
{
	return (uint64_t *)ch;
}

static uint8_t *slot(uint8_t *ch, uint64_t n)
{
	return ch + SLOT * (1 + (n - 1) % SLOTS);
}

static int send(uint8_t *ch, const char *text)
{
	uint64_t n = __atomic_load_n(counter(ch), __ATOMIC_ACQUIRE) + 1;
	uint32_t len = strlen(text);
	uint8_t *s = slot(ch, n);

	if (len > TEXT_MAX) {
		fprintf(stderr, "mbox: message longer than %zu bytes\n",
			TEXT_MAX);
		return 2;
	}
	memcpy(s, &len, sizeof(len));
	memcpy(s + sizeof(len), text, len);
	__atomic_store_n(counter(ch), n, __ATOMIC_RELEASE);
	return 0;
}

static int recv(uint8_t *ch, uint64_t n, double seconds)
{
	struct timespec ts = { 0, 1000000 }, t0, t1;
	char text[SLOT];
	uint64_t have;
	uint32_t len;

	if (n < 1) {
		fprintf(stderr, "mbox: messages are counted from 1\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((have = __atomic_load_n(counter(ch), __ATOMIC_ACQUIRE)) < n) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9 >
		    seconds) {
			fprintf(stderr, "mbox: no message %llu after %.0f s (the peer sent %llu)\n",
				(unsigned long long)n, seconds,
				(unsigned long long)have);
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	if (have - n >= SLOTS) {
		fprintf(stderr, "mbox: message %llu was overwritten (the peer is at %llu)\n",
			(unsigned long long)n, (unsigned long long)have);
		return 1;
	}
	memcpy(&len, slot(ch, n), sizeof(len));
	if (len > TEXT_MAX) {
		fprintf(stderr, "mbox: message %llu is corrupt\n",
			(unsigned long long)n);
		return 1;
	}
	memcpy(text, slot(ch, n) + sizeof(len), len);
	text[len] = '\0';
	printf("%s\n", text);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "send"))
		return send(channel(argv[2]), argv[3]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "recv"))
		return recv(channel(argv[2]), strtoull(argv[3], NULL, 10),
			    argc == 5 ? atof(argv[4]) : 60);
	if (argc == 3 && !strcmp(argv[1], "count")) {
		printf("%llu\n", (unsigned long long)__atomic_load_n(
					 counter(channel(argv[2])),
					 __ATOMIC_ACQUIRE));
		return 0;
	}
	fprintf(stderr, "usage: mbox send CH TEXT | recv CH N [SECONDS] | count CH\n");
	return 2;
}
