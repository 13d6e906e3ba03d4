#!/bin/sh
# e2e case "rpm": no RPM-based distribution is reachable from here, so the
# RPMs are built on this Debian host (scripts/build-packages.sh rpm) and
# checked with Debian's rpm against a scratch database:
#   - metadata: names, version from VERSION, architectures;
#   - file lists: the tools, daemon, mount helpers and man pages; the DKMS
#     tree (dkms.conf stamped with the version, build scripts, every patch
#     in the series); units, udev rule, preset and modules-load files;
#     /etc/famfs/famfs.conf as %config(noreplace);
#   - dependencies: what each package Requires (and nothing from Debian);
#   - scriptlets: syntax, and run against a stub `dkms` that records its
#     arguments (add/install on %post, remove on %preun; a failing dkms
#     does not fail the transaction);
#   - install, upgrade N -> N+1 and erase with `rpm --root SCRATCH`
#     (--nodeps: the scratch root provides nothing; --noscripts: it has no
#     /bin/sh; the scriptlets are exercised separately as above).
# Not tested: dependency resolution by dnf/yum against a real Fedora/EL
# repository, the scriptlets running dkms for real on an RPM system, and
# systemd presets on such a system.
#
#   tests/e2e/rpm-check.sh [OUTDIR]      (default <repo>/build-e2e/rpm)
# Prints ok/not ok lines; exits non-zero on a failure.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build-e2e/rpm}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fails=0
tmp=$(mktemp)
R=$out/scratch-root
trap 'rm -f "$tmp"' EXIT

t() { # WHAT CMD...
	what=$1
	shift
	if "$@" >"$tmp" 2>&1; then
		echo "ok - $what"
	else
		sed 's/^/#   /' "$tmp" | tail -n 30
		echo "not ok - $what"
		fails=$((fails + 1))
	fi
}
skip() { echo "ok - $1 # SKIP $2"; }

V=$(git -C "$top" show HEAD:VERSION)
# N: this tree. N+1: a scratch clone with VERSION's last number bumped.
rm -rf "$out/cur" "$out/next" "$out/next-src"
t "rpmbuild famfs $V" sh -c "'$top/scripts/build-packages.sh' rpm '$out/cur' >'$out/cur.log' 2>&1 || { tail -n 30 '$out/cur.log'; exit 1; }"
N=$(echo "$V" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
git clone -q --shared --no-checkout "$top" "$out/next-src" &&
	git -C "$out/next-src" checkout -q --detach "$(git -C "$top" rev-parse HEAD)" &&
	rm -rf "$out/next-src/packaging" && cp -a "$top/packaging" "$out/next-src/packaging" &&
	echo "$N" >"$out/next-src/VERSION" &&
	git -C "$out/next-src" -c user.name=famfs-e2e -c user.email=famfs-e2e@localhost commit -q -m "e2e: $N" VERSION
t "rpmbuild famfs $N (upgrade test build)" sh -c "'$out/next-src/scripts/build-packages.sh' rpm '$out/next' >'$out/next.log' 2>&1 || { tail -n 30 '$out/next.log'; exit 1; }"

main=$(ls "$out"/cur/rpm/RPMS/*/famfs-"$V"-*.rpm 2>/dev/null | head -n1)
dk=$(ls "$out"/cur/rpm/RPMS/*/famfs-dkms-"$V"-*.rpm 2>/dev/null | head -n1)
main2=$(ls "$out"/next/rpm/RPMS/*/famfs-"$N"-*.rpm 2>/dev/null | head -n1)
dk2=$(ls "$out"/next/rpm/RPMS/*/famfs-dkms-"$N"-*.rpm 2>/dev/null | head -n1)
libs=$(ls "$out"/cur/rpm/RPMS/*/famfs-libs-"$V"-*.rpm 2>/dev/null | head -n1)
devel=$(ls "$out"/cur/rpm/RPMS/*/famfs-devel-"$V"-*.rpm 2>/dev/null | head -n1)
if [ -z "$main" ] || [ -z "$dk" ] || [ -z "$libs" ] || [ -z "$devel" ]; then
	echo "not ok - the four RPMs (famfs, famfs-dkms, famfs-libs, famfs-devel) were built"
	exit 1
fi
q() { rpm -qp "$@" 2>/dev/null; }

# --- metadata
t "famfs: name, version $V, arch x86_64" \
	test "$(q --qf '%{NAME} %{VERSION} %{ARCH}' "$main")" = "famfs $V x86_64"
t "famfs-dkms: name, version $V, noarch" \
	test "$(q --qf '%{NAME} %{VERSION} %{ARCH}' "$dk")" = "famfs-dkms $V noarch"
t "both have a license and summary" sh -c "
	for r in '$main' '$dk'; do
		[ -n \"\$(rpm -qp --qf '%{LICENSE}' \"\$r\")\" ] && [ -n \"\$(rpm -qp --qf '%{SUMMARY}' \"\$r\")\" ] || exit 1
	done"

# --- file lists
q -l "$main" >"$out/famfs.files"
q -l "$dk" >"$out/famfs-dkms.files"
for f in /usr/bin/famfs /usr/sbin/famfs-fused /usr/sbin/famfs_fused \
	/usr/sbin/mkfs.famfs /usr/sbin/mount.famfs /usr/sbin/mount.fuse.famfs; do
	t "famfs ships $f" grep -qx "$f" "$out/famfs.files"
done
t "mount.fuse.famfs is a symlink to mount.famfs" \
	sh -c "rpm -qp --dump '$main' | awk '\$1 == \"/usr/sbin/mount.fuse.famfs\" { print \$11 }' | grep -qx mount.famfs"
t "famfs_fused (upstream's name) is a symlink to famfs-fused" \
	sh -c "rpm -qp --dump '$main' | awk '\$1 == \"/usr/sbin/famfs_fused\" { print \$11 }' | grep -qx famfs-fused"
# What the packages are built from: the committed tree (HEAD).
head_() { git -C "$top" show "HEAD:$1"; }
for m in $(git -C "$top" ls-tree --name-only HEAD man/ | sed -n 's|^man/\(.*\.[0-9]\)$|\1|p'); do
	t "famfs ships the man page $m" grep -q "/usr/share/man/man${m##*.}/$m" "$out/famfs.files"
done
t "famfs ships /etc/famfs/famfs.conf as %config(noreplace)" \
	sh -c "rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' '$main' | grep -Eq '^/etc/famfs/famfs.conf [a-z]*c[a-z]*n'"
for u in famfs.service famfs@.service; do
	t "famfs ships the unit $u" grep -qx "/usr/lib/systemd/system/$u" "$out/famfs.files"
done
t "famfs ships the udev rule 60-famfs.rules" grep -qx /usr/lib/udev/rules.d/60-famfs.rules "$out/famfs.files"
t "famfs ships a preset enabling famfs.service" sh -c "
	grep -qx /usr/lib/systemd/system-preset/80-famfs.preset '$out/famfs.files' &&
	rpm2cpio '$main' | (cd '$out' && cpio -id --quiet ./usr/lib/systemd/system-preset/80-famfs.preset) &&
	grep -qx 'enable famfs.service' '$out/usr/lib/systemd/system-preset/80-famfs.preset'"
t "famfs-dkms ships modules-load.d/famfs-fuse.conf" grep -qx /usr/lib/modules-load.d/famfs-fuse.conf "$out/famfs-dkms.files"
t "famfs scriptlets preset, disable and try-restart the units" sh -c "
	s=\$(rpm -qp --scripts '$main') &&
	echo \"\$s\" | grep -q 'systemctl --no-reload preset famfs.service' &&
	echo \"\$s\" | grep -q 'disable --now famfs.service' &&
	echo \"\$s\" | grep -q \"try-restart famfs.service 'famfs@\*.service'\""
d=/usr/src/famfs-fuse-$V
lines=$(git -C "$top" ls-tree --name-only HEAD dkms/patches/ | sed 's|.*/||' | tr '\n' ' ')
for f in dkms.conf build.sh rename.sh source-files; do
	t "famfs-dkms ships $d/$f" grep -qx "$d/$f" "$out/famfs-dkms.files"
done
for l in $lines; do
	t "famfs-dkms ships $d/patches/$l/series" grep -qx "$d/patches/$l/series" "$out/famfs-dkms.files"
	for p in $(head_ "dkms/patches/$l/series" | grep -v '^[[:space:]]*\(#\|$\)'); do
		t "famfs-dkms ships patch $l/$p" grep -qx "$d/patches/$l/$p" "$out/famfs-dkms.files"
	done
done
t "famfs-dkms ships nothing outside $d but its modules-load file" sh -c "! grep -v '^$d' '$out/famfs-dkms.files' | grep -vx /usr/lib/modules-load.d/famfs-fuse.conf"

# --- install into a scratch root (payload and database), verify, upgrade, erase
rm -rf "$R"
mkdir -p "$R"
rpm --root "$R" --initdb 2>/dev/null
t "rpm --root: install famfs and famfs-dkms $V" \
	rpm --root "$R" -ivh --nodeps --noscripts "$main" "$dk"
t "rpm --root -V: installed files verify" rpm --root "$R" -V --nodeps famfs famfs-dkms
t "dkms.conf in the scratch root has PACKAGE_VERSION=\"$V\" and PACKAGE_NAME=\"famfs-fuse\"" \
	sh -c "grep -qx 'PACKAGE_VERSION=\"$V\"' '$R$d/dkms.conf' && grep -qx 'PACKAGE_NAME=\"famfs-fuse\"' '$R$d/dkms.conf'"
# Every file of dkms/patches/ (series and patches), byte for byte, and
# no other file under patches/.
t "the installed dkms tree matches dkms/ of HEAD (scripts, series, every patch)" sh -c "
	want=\$(git -C '$top' ls-tree -r --name-only HEAD dkms/patches/ | sed 's|^dkms/||' | sort)
	[ -n \"\$want\" ] || exit 1
	got=\$(cd '$R$d' && find patches -type f | sort)
	[ \"\$want\" = \"\$got\" ] || { echo '# patches/ differs from dkms/patches/ of HEAD'; exit 1; }
	for f in build.sh rename.sh source-files \$want; do
		git -C '$top' show HEAD:dkms/\$f | cmp - '$R$d/'\$f || exit 1
	done"
conf=$R/etc/famfs/famfs.conf
[ -f "$conf" ] && echo "# rpm-check: local edit" >>"$conf"
if [ -n "$main2" ] && [ -n "$dk2" ]; then
	t "rpm --root: upgrade to $N" rpm --root "$R" -Uvh --nodeps --noscripts "$main2" "$dk2"
	t "after the upgrade only $N is installed" \
		sh -c "[ \"\$(rpm --root '$R' -q --qf '%{VERSION}\n' famfs famfs-dkms | sort -u)\" = '$N' ]"
	t "the upgrade replaced the dkms tree ($d gone, -$N present)" \
		sh -c "[ ! -e '$R$d' ] && [ -f '$R/usr/src/famfs-fuse-$N/dkms.conf' ]"
	if [ -f "$conf" ]; then
		t "the upgrade kept the edit in /etc/famfs/famfs.conf" grep -qx "# rpm-check: local edit" "$conf"
	else
		echo "#   /etc/famfs/famfs.conf not shipped: nothing to keep"
		echo "not ok - the upgrade kept the edit in /etc/famfs/famfs.conf (not shipped)"
		fails=$((fails + 1))
	fi
else
	# The upgrade checks cannot run: that is a failure, not a pass.
	echo "not ok - the $N RPMs to upgrade to were built (famfs, famfs-dkms)"
	fails=$((fails + 1))
fi
t "rpm --root: erase both" rpm --root "$R" -e --nodeps --noscripts famfs famfs-dkms
t "after erase no famfs files are left" sh -c "
	! find '$R' -path '$R/var' -prune -o \( -name 'famfs*' -o -name 'mkfs.famfs' -o -name 'mount.*famfs' \) -print | grep .
	! ls -d '$R'/usr/src/famfs-fuse-* 2>/dev/null | grep ."

# --- dependencies
q -R "$main" | grep -v '^rpmlib(' | sort -u >"$out/famfs.requires"
q -R "$dk" | grep -v '^rpmlib(' | sort -u >"$out/famfs-dkms.requires"
sed 's/^/#   famfs requires: /' "$out/famfs.requires" | grep -v GLIBC
sed 's/^/#   famfs-dkms requires: /' "$out/famfs-dkms.requires"
t "famfs requires fuse3 and libfuse3.so.3" sh -c "
	grep -qx fuse3 '$out/famfs.requires' && grep -q '^libfuse3.so.3()(64bit)' '$out/famfs.requires'"
t "famfs requires only sonames, fuse3 and rtld (nothing Debian-specific)" sh -c "
	! grep -Ev '^(fuse3|rtld\\(GNU_HASH\\)|/bin/sh|systemd.*|config\\(famfs\\) = .*|lib[a-z0-9_.+-]+\\.so\\.[0-9]+.*|ld-linux-x86-64\\.so\\.2.*)\$' '$out/famfs.requires'"
t "famfs-dkms requires dkms, kernel-devel, patch, xz and /bin/sh" sh -c "
	for r in dkms kernel-devel patch xz /bin/sh; do grep -qx \"\$r\" '$out/famfs-dkms.requires' || { echo missing \$r; exit 1; }; done"
t "famfs-dkms recommends famfs of the same version" sh -c "
	rpm -qp --recommends '$dk' 2>/dev/null | grep -q '^famfs = $V'"

# --- scriptlets of famfs-dkms against a stub dkms
S=$out/stub
rm -rf "$S"
mkdir -p "$S/bin"
cat >"$S/bin/dkms" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_LOG"
exit "${STUB_RC:-0}"
EOF
chmod +x "$S/bin/dkms"
q --qf '%{POSTIN}' "$dk" >"$S/post"
q --qf '%{PREUN}' "$dk" >"$S/preun"
t "famfs-dkms scriptlets are valid sh" sh -c "sh -n '$S/post' && sh -n '$S/preun'"
t "%post runs dkms add, then dkms install, for famfs-fuse $V" sh -c "
	: >'$S/log'; STUB_LOG='$S/log' PATH='$S/bin':\$PATH sh '$S/post' 1 &&
	sed -n 1p '$S/log' | grep -q '^add .*-m famfs-fuse -v $V' &&
	sed -n 2p '$S/log' | grep -q '^install .*-m famfs-fuse -v $V'"
t "%preun runs dkms remove --all for famfs-fuse $V" sh -c "
	: >'$S/log'; STUB_LOG='$S/log' PATH='$S/bin':\$PATH sh '$S/preun' 0 &&
	grep -q '^remove .*-m famfs-fuse -v $V.*--all' '$S/log'"
t "a failing dkms does not fail the transaction" sh -c "
	STUB_LOG='$S/log' STUB_RC=1 PATH='$S/bin':\$PATH sh '$S/post' 1 &&
	STUB_LOG='$S/log' STUB_RC=1 PATH='$S/bin':\$PATH sh '$S/preun' 0"

for b in famfs famfs-fused famfs_fused mkfs.famfs mount.famfs mount.fuse.famfs; do
	t "famfs has a gzip-compressed man page for $b" sh -c "
		rpm -qlp '$main' | grep -qx '/usr/share/man/man8/$b.8.gz'"
done
# Clean apart from the filters in packaging/rpm/rpmlint.toml, each of
# which says why.
# libfamfs-cache: the library alone in -libs, what builds with it in -devel.
q -l "$libs" | grep -v -e '^/usr/lib/.build-id' -e '^/usr/share/licenses/' >"$out/libs.files"
q -l "$devel" | grep -vx /usr/include/famfs >"$out/devel.files"
printf '%s\n' /usr/lib64/libfamfs-cache.so.1 /usr/lib64/libfamfs-cache.so.1.0.0 >"$out/libs.want"
printf '%s\n' /usr/include/famfs/cache.h /usr/lib64/libfamfs-cache.so \
	/usr/lib64/pkgconfig/famfs-cache.pc /usr/share/man/man3/famfs_cache.3.gz >"$out/devel.want"
t "famfs-libs ships libfamfs-cache.so.1 and nothing else" diff "$out/libs.want" "$out/libs.files"
t "famfs-devel ships the header, the .so link, famfs-cache.pc and famfs_cache(3)" \
	diff "$out/devel.want" "$out/devel.files"
t "famfs ships pcq and pcq(1)" sh -c "
	grep -qx /usr/bin/pcq '$out/famfs.files' && grep -qx /usr/share/man/man1/pcq.1.gz '$out/famfs.files'"
t "rpmlint: no error or warning beyond the justified filters" sh -c "
	rpmlint -c '$top/packaging/rpm/rpmlint.toml' '$main' '$dk' '$libs' '$devel' >'$out/rpmlint.txt' 2>&1
	rc=\$?; tail -n 1 '$out/rpmlint.txt'
	grep -E ': (E|W): ' '$out/rpmlint.txt'; [ \$rc -eq 0 ] &&
	tail -n 1 '$out/rpmlint.txt' | grep -q ' 0 errors, 0 warnings'"
[ "$fails" -eq 0 ]
