#!/bin/sh
# Turn a (patched) copy of fs/fuse into famfs_fuse, a module that loads
# beside the distribution's built-in fuse. This is the only place where
# the rename happens: the patch series stays an ordinary fs/fuse series.
#
#   dkms/rename.sh TREE        TREE holds fs/fuse/ (a partial kernel tree)
#
# Every substitution states how many matches it expects; a mismatch means
# the source changed under us, and we stop rather than build a module that
# could clash with the built-in one.
set -eu

tree=${1:?usage: rename.sh TREE}
d=$tree/fs/fuse
[ -f "$d/fuse_i.h" ] || { echo "rename: no fs/fuse in $tree" >&2; exit 1; }

fail() { echo "rename: $*" >&2; exit 1; }

# subst FILE EXPECTED SED-EXPR: apply SED-EXPR to FILE; it must change
# exactly EXPECTED lines.
subst() {
	f=$d/$1 n=$2 e=$3
	got=$(sed -n "${e}p" "$f" | wc -l)
	[ "$got" -eq "$n" ] || fail "$1: '$e' matched $got lines, expected $n"
	sed -i "$e" "$f"
}
# drop FILE LINE: delete the one line that equals LINE.
drop() {
	got=$(grep -cxF "$2" "$d/$1" || true)
	[ "$got" -eq 1 ] || fail "$1: '$2' found $got times, expected 1"
	grep -vxF "$2" "$d/$1" >"$d/$1.tmp" && mv "$d/$1.tmp" "$d/$1"
}

# 1. Parts we do not ship: CUSE and virtiofs stay with the built-in fuse.
# The stock kernel's config has no famfs option: this build always has it.
famfs_cfg=0
grep -q '^config FUSE_FAMFS_DAX$' "$d/Kconfig" && famfs_cfg=1
rm -f "$d/cuse.c" "$d/virtio_fs.c" "$d/Kconfig"

# 2. Module name and objects.
subst Makefile 1 's/^obj-\$(CONFIG_FUSE_FS) += fuse\.o$/obj-m += famfs_fuse.o/'
drop Makefile 'obj-$(CONFIG_CUSE) += cuse.o'
drop Makefile 'obj-$(CONFIG_VIRTIO_FS) += virtiofs.o'
drop Makefile 'virtiofs-y := virtio_fs.o'
sed -i 's/^fuse-\([^ ]*\) \([:+]\)= /famfs_fuse-\1 \2= /' "$d/Makefile"
grep -q '^fuse-' "$d/Makefile" && fail "Makefile: unrenamed fuse- objects"
cat >>"$d/Makefile" <<'EOF'

# Added by dkms/rename.sh: our patched uapi headers (include/uapi/linux/
# fuse.h) come before the ones of the kernel we build against.
NOSTDINC_FLAGS += -I$(src)/../../include/uapi
EOF
if [ $famfs_cfg = 1 ]; then
	# Before the object lists that test it.
	{
		echo '# famfs is always built here (the stock kernel has no such option).'
		echo 'CONFIG_FUSE_FAMFS_DAX := y'
		cat "$d/Makefile"
		# After the Makefile's own "ccflags-y =".
		echo 'ccflags-y += -DCONFIG_FUSE_FAMFS_DAX=1'
	} >"$d/Makefile.tmp"
	mv "$d/Makefile.tmp" "$d/Makefile"
fi

# 3. Log prefix and trace system.
subst fuse_i.h 1 's/^# define pr_fmt(fmt) "fuse: " fmt$/# define pr_fmt(fmt) "famfs_fuse: " fmt/'
subst fuse_trace.h 1 's/^#define TRACE_SYSTEM fuse$/#define TRACE_SYSTEM famfs_fuse/'

# 4. Character device: our own name, a dynamic minor, no fuse aliases.
drop dev.c 'MODULE_ALIAS_MISCDEV(FUSE_MINOR);'
drop dev.c 'MODULE_ALIAS("devname:fuse");'
subst dev.c 1 's/^\t\.minor = FUSE_MINOR,$/\t.minor = MISC_DYNAMIC_MINOR,/'
subst dev.c 1 's/^\t\.name  = "fuse",$/\t.name  = "famfs-fuse",/'

# 5. Slab caches.
subst dev.c 1 's/kmem_cache_create("fuse_request",/kmem_cache_create("famfs_fuse_request",/'
subst inode.c 1 's/kmem_cache_create("fuse_inode",/kmem_cache_create("famfs_fuse_inode",/'

# 6. File system types, the bdi name suffix and the sysfs directory.
subst inode.c 1 's/^\t\.name\t\t= "fuse",$/\t.name\t\t= "famfs_fuse",/'
subst inode.c 1 's/^MODULE_ALIAS_FS("fuse");$/MODULE_ALIAS_FS("famfs_fuse");/'
subst inode.c 1 's/^\t\.name\t\t= "fuseblk",$/\t.name\t\t= "famfs_fuseblk",/'
subst inode.c 1 's/^MODULE_ALIAS_FS("fuseblk");$/MODULE_ALIAS_FS("famfs_fuseblk");/'
subst inode.c 1 's/suffix = "-fuseblk";/suffix = "-famfs_fuseblk";/'
subst inode.c 1 's/kobject_create_and_add("fuse", fs_kobj)/kobject_create_and_add("famfs_fuse", fs_kobj)/'
subst inode.c 1 's/^MODULE_DESCRIPTION("Filesystem in Userspace");$/MODULE_DESCRIPTION("Filesystem in Userspace, famfs build");/'
subst control.c 1 's/^\t\.name\t\t= "fusectl",$/\t.name\t\t= "famfs_fusectl",/'
subst control.c 1 's/^MODULE_ALIAS_FS("fusectl");$/MODULE_ALIAS_FS("famfs_fusectl");/'

# 7. Exported symbols: every one gets the famfs_ prefix, wherever it is
# used, so that none clashes with the built-in fuse's exports. The list is
# taken from the sources so that exports added by our patches follow.
syms=$(sed -n 's/^EXPORT_SYMBOL\(_GPL\)\{0,1\}(\(fuse_[a-z0-9_]*\));$/\2/p' \
	"$d"/*.c | sort -u)
[ -n "$syms" ] || fail "no exported fuse_ symbols found"
# fuse_trace.h is left out: its event names (fuse_request_end) are not the
# exported functions of the same name and live under TRACE_SYSTEM already.
files=$(ls "$d"/*.c "$d"/*.h | grep -v '/fuse_trace\.h$')
for s in $syms; do
	# shellcheck disable=SC2086
	sed -i "s/\\b$s\\b/famfs_$s/g" $files
done
left=$(grep -h '^EXPORT_SYMBOL' "$d"/*.c | grep -v '(famfs_' || true)
[ -z "$left" ] || fail "exports without the famfs_ prefix: $left"
echo "rename: fs/fuse -> famfs_fuse ($(echo "$syms" | wc -l) exports renamed)"
