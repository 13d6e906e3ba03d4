#!/bin/sh
# Build the Debian (deb) or RPM (rpm) packages from the committed tree
# (HEAD; packaging/ itself is taken from the work tree so it can be tried
# before it is committed). The version comes from VERSION alone.
#
# usage: build-packages.sh deb|rpm [OUTDIR]    (default OUTDIR: build-pkg)
set -eu
kind=${1:?usage: build-packages.sh deb|rpm [OUTDIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${2:-$top/build-pkg}" && cd "${2:-$top/build-pkg}" && pwd)
version=$(git -C "$top" show HEAD:VERSION)
src=$out/famfs-$version

# A clean source tree: what is committed, nothing built.
rm -rf "$src"
mkdir -p "$src"
git -C "$top" archive HEAD | tar -xf - -C "$src"

case $kind in
deb)
	cp -a "$top/packaging/debian" "$src/debian"
	cat >"$src/debian/changelog" <<EOT
famfs ($version) unstable; urgency=medium

  * Release $version; see the git history for changes.

 -- famfs-fuse developers <famfs-fuse@lists.debian.net>  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct)}")
EOT
	(cd "$src" && dpkg-buildpackage -us -uc -b >"$out/deb-build.log" 2>&1) || {
		tail -n 40 "$out/deb-build.log"
		exit 1
	}
	ls "$out"/*.deb
	;;
rpm)
	mkdir -p "$out/rpm/SOURCES" "$out/rpm/SPECS"
	tar -C "$out" -czf "$out/rpm/SOURCES/famfs-$version.tar.gz" "famfs-$version"
	sed "s/@VERSION@/$version/" "$top/packaging/rpm/famfs.spec" \
		>"$out/rpm/SPECS/famfs.spec"
	# Debian has no RPM database of build dependencies: --nodeps.
	# Debian's brp-compress uses bash's read -d under #!/bin/sh (dash) and
	# compresses nothing; run it with bash, as Fedora's rpm does.
	rpmbuild --nodeps -bb --define "_topdir $out/rpm" \
		--define "__brp_compress /bin/bash %{_rpmconfigdir}/brp-compress %{?_prefix}" \
		"$out/rpm/SPECS/famfs.spec" >"$out/rpm-build.log" 2>&1 || {
		tail -n 40 "$out/rpm-build.log"
		exit 1
	}
	find "$out/rpm/RPMS" -name '*.rpm'
	;;
*)
	echo "build-packages.sh: unknown kind $kind (deb or rpm)" >&2
	exit 2
	;;
esac
