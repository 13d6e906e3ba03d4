// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading and writing a file's bytes straight from the device mapping, by
 * its fmap. Used where no kernel famfs serves the data: the daemon's
 * fallback mode, and the tools working on an unmounted device.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/*
 * Bytes for an image file go in by pwrite(): the kernel copies them into
 * the file's page cache, which the mapping shares. Through the mapping,
 * each page this process has not touched yet costs a fault of its own
 * (4 KiB; a device's mapping faults 2 MiB at a time): a file written
 * once went in 10 to 25 times slower (bench/README.md, meta_cp).
 * @src NULL writes zeros.
 */
static int write_image(const struct famfs_dev *dev, uint64_t dev_off,
		       const uint8_t *src, size_t n)
{
	static const uint8_t zeros[65536];
	struct stat st;

	/* Writing past the end would grow a shrunk image back, with holes. */
	if (fstat(dev->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < dev_off + n)
		return famfs_fail(EIO, "%s is now smaller than the file system",
				  dev->path);
	while (n) {
		size_t len = src || n < sizeof(zeros) ? n : sizeof(zeros);
		ssize_t put = pwrite(dev->fd, src ? src : zeros, len,
				     (off_t)dev_off);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return famfs_fail(put ? errno : EIO,
					  "%s: write at offset %llu: %s",
					  dev->path,
					  (unsigned long long)dev_off,
					  put ? strerror(errno) : "no progress");
		if (src)
			src += put;
		dev_off += (uint64_t)put;
		n -= (size_t)put;
	}
	return 0;
}

/*
 * Store @n bytes of @src (zeros if NULL) at @dev_off; with @sync, made
 * durable too (else famfs_data_sync() does that later).
 */
static int put(const struct famfs_dev *dev, uint64_t dev_off,
	       const uint8_t *src, size_t n, bool sync)
{
	int rc;

	if (dev->kind == FAMFS_DEV_DAX) {
		/* around the cache: nothing to flush after, no line read */
		if (src)
			famfs_cache_copy(dev->base + dev_off, src, n);
		else
			famfs_cache_zero(dev->base + dev_off, n);
		return 0;
	}
	if (dev->kind == FAMFS_DEV_FILE) {
		rc = write_image(dev, dev_off, src, n);
		if (rc)
			return rc;
	} else if (src) {
		memcpy(dev->base + dev_off, src, n);
	} else {
		memset(dev->base + dev_off, 0, n);
	}
	if (sync)
		famfs_dev_flush(dev, dev->base + dev_off, n);
	return 0;
}

/* The device index @i of @dev's famfs is on, with its memory mapped. */
static const struct famfs_dev *member(const struct famfs_dev *dev, uint64_t i,
				      int *rc)
{
	const struct famfs_dev *d = famfs_dev_member(dev, i);
	char u[37] = "unknown";

	*rc = 0;
	if (!d) {
		/* famfs_dev_open_members() filled in the geometry */
		if (dev->geo_valid && i < famfs_geo_ndevs(&dev->geo))
			famfs_uuid_str(dev->geo.dev[i].uuid, u);
		*rc = famfs_fail(EIO, "device %llu (uuid %s) of the famfs on %s is missing on this host (famfs daxdev lists its devices)",
				 (unsigned long long)i, u, dev->path);
	} else if (!d->base) {
		*rc = famfs_fail(ENXIO, "%s: the device memory is not mapped",
				 d->path);
	}
	return d;
}

static ssize_t data_rw(const struct famfs_dev *dev,
		       const struct famfs_omf_fmap *fm, uint64_t size,
		       uint64_t off, void *buf, size_t len, bool write,
		       bool sync)
{
	uint8_t *p = buf;
	size_t done = 0;

	if (!dev->base)
		return famfs_fail(ENXIO, "%s: the device memory is not mapped", dev->path);
	if (write && !dev->writable)
		return famfs_fail(EROFS, "%s is open read-only", dev->path);
	if (off >= size) {
		if (write && len)
			return famfs_fail(EFBIG, "famfs files cannot grow: offset %llu is at or past the end (%llu bytes)",
					  (unsigned long long)off,
					  (unsigned long long)size);
		return 0;
	}
	/* Cut short at the end, as for RLIMIT_FSIZE: the next one fails. */
	if (len > size - off)
		len = (size_t)(size - off);
	while (done < len) {
		uint64_t di, dev_off, contig;
		const struct famfs_dev *d;
		size_t n;
		int rc = famfs_fmap_resolve(fm, off + done, &di, &dev_off,
					    &contig);

		if (rc)
			return rc;
		d = member(dev, di, &rc);
		if (!rc && write && !d->writable)
			rc = famfs_fail(EROFS, "%s is open read-only", d->path);
		if (rc)
			return rc;
		/* The fmap was checked against this device, but be sure. */
		if (famfs_range_exceeds(dev_off, 1, d->size))
			return famfs_fail(EIO, "fmap points outside the device");
		n = len - done;
		if (n > contig)
			n = (size_t)contig;
		if (n > d->size - dev_off)
			n = (size_t)(d->size - dev_off);
		if (write) {
			rc = put(d, dev_off, p + done, n, sync);
			if (rc)
				return rc;
		} else {
			famfs_dev_invalidate(d, d->base + dev_off, n);
			memcpy(p + done, d->base + dev_off, n);
		}
		done += n;
	}
	return (ssize_t)done;
}

ssize_t famfs_data_read(const struct famfs_dev *dev,
			const struct famfs_omf_fmap *fm, uint64_t size,
			uint64_t off, void *buf, size_t len)
{
	return data_rw(dev, fm, size, off, buf, len, false, false);
}

ssize_t famfs_data_write(const struct famfs_dev *dev,
			 const struct famfs_omf_fmap *fm, uint64_t size,
			 uint64_t off, const void *buf, size_t len)
{
	return data_rw(dev, fm, size, off, (void *)buf, len, true, true);
}

ssize_t famfs_data_store(const struct famfs_dev *dev,
			 const struct famfs_omf_fmap *fm, uint64_t size,
			 uint64_t off, const void *buf, size_t len)
{
	return data_rw(dev, fm, size, off, (void *)buf, len, true, false);
}

/* Call @fn on each contiguous run of device memory under [@from, @to). */
static int each_run(const struct famfs_dev *dev,
		    const struct famfs_omf_fmap *fm, uint64_t from, uint64_t to,
		    int (*fn)(const struct famfs_dev *d, uint64_t dev_off,
			      size_t n))
{
	uint64_t di, dev_off, contig;
	const struct famfs_dev *d;
	int rc;

	if (!dev->base || !dev->writable)
		return famfs_fail(EROFS, "%s: the device memory is not writable here",
				  dev->path);
	while (from < to) {
		rc = famfs_fmap_resolve(fm, from, &di, &dev_off, &contig);
		if (rc)
			return rc;
		d = member(dev, di, &rc);
		if (!rc && !d->writable)
			rc = famfs_fail(EROFS, "%s is open read-only", d->path);
		if (rc)
			return rc;
		if (contig > to - from)
			contig = to - from;
		if (famfs_range_exceeds(dev_off, contig, d->size))
			return famfs_fail(EIO, "fmap points outside the device");
		rc = fn(d, dev_off, (size_t)contig);
		if (rc)
			return rc;
		from += contig;
	}
	return 0;
}

static int zero_run(const struct famfs_dev *d, uint64_t dev_off, size_t n)
{
	return put(d, dev_off, NULL, n, false);
}

int famfs_data_zero(const struct famfs_dev *dev,
		    const struct famfs_omf_fmap *fm, uint64_t from,
		    uint64_t to)
{
	return each_run(dev, fm, from, to, zero_run);
}

static int sync_run(const struct famfs_dev *d, uint64_t dev_off, size_t n)
{
	/* put() stored a devdax device's bytes around the cache already */
	if (d->kind != FAMFS_DEV_DAX)
		famfs_dev_flush(d, d->base + dev_off, n);
	return 0;
}

int famfs_data_sync(const struct famfs_dev *dev,
		    const struct famfs_omf_fmap *fm, uint64_t from,
		    uint64_t to)
{
	return each_run(dev, fm, from, to, sync_run);
}
