#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# shunit2 suite: the Debian package and the container image, as built
# (`make deb`: build/deb/; dist/image.sh makes the image from that package):
# - the package holds exactly its files, the /etc/default files as its
#   conffiles, and a Depends: line that dpkg-shlibdeps gives again from the
#   packaged binary and from what export opens with dlopen;
# - lintian, at its default level, says nothing;
# - its units pass systemd-analyze verify as the package installs them;
# - the image holds the package, runs `blkwise export` with the flags
#   PC_RUN gives it (docs/export.md, "In a container"), and counts a loop
#   device's requests exactly as the host's export does, and as diskstats;
# - dist/blkwise-daemonset.yaml names exactly those capabilities and mounts.
# The package installed on a machine without the build's packages is
# tests/test_package_install.sh (the VM tier).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"

PC_VERSION=$(sed -n 1p "$BW_ROOT/debian/changelog" | cut -d' ' -f2 | tr -d '()')
PC_DEB=$BW_ROOT/build/deb/blkwise_${PC_VERSION}_amd64.deb
PC_IMAGE=blkwise:$PC_VERSION
# podman's runtime: runc, as crun refuses a host whose cgroups are hybrid.
PC_RUNTIME=${PC_RUNTIME:-runc}

# What the exporter in the image is given, one source for the run below and
# the DaemonSet's check (docs/export.md, "In a container", says why each):
# the capabilities,
PC_CAPS="BPF PERFMON SYS_RESOURCE SETUID SETGID SETPCAP SYS_CHROOT DAC_OVERRIDE CHOWN"
# and the mounts, PATH:ro|rw (the state directory is the test's own here,
# the node's /var/lib/blkwise in the DaemonSet).
PC_MOUNTS="/sys/fs/cgroup:ro /var/lib/blkwise:rw"

# pc_run_args STATE: podman run's options for the exporter.  Besides the
# capabilities and mounts: no seccomp filter (podman's default allows bpf()
# only with CAP_SYS_ADMIN), /sys/dev/block unmasked (podman masks it; the
# exporter finds devices by their numbers there), the host's network and
# cgroup namespace, and rlimits any host lets a container set (podman's
# defaults are higher than a host without CAP_SYS_RESOURCE may grant).
pc_run_args() {
	local m
	echo --runtime "$PC_RUNTIME" --network host --cgroupns host \
		--ulimit nofile=1024:4096 --ulimit nproc=4096:4096 \
		--security-opt seccomp=unconfined --security-opt unmask=/sys/dev/block \
		--cap-drop all --cap-add "$(echo $PC_CAPS | tr ' ' ,)"
	for m in $PC_MOUNTS; do
		case ${m%:*} in
		/var/lib/blkwise) echo -v "$1:${m%:*}:${m##*:}" ;;
		*) echo -v "${m%:*}:${m%:*}:${m##*:}" ;;
		esac
	done
}

pc_require_deb() {
	bw_require dpkg-deb "$@" || return 1
	[ -f "$PC_DEB" ] || { fail "no $PC_DEB: make deb (make test makes it)"; return 1; }
}

# The package's files, its conffiles, and the maintainer scripts enabling
# the exporter's unit but not the per-device template.
test_deb_contents() {
	local want
	pc_require_deb || return 0
	want=$(printf '%s\n' /etc/default/blkwise-export /etc/default/blkwise-tune \
		/lib/systemd/system/blkwise-export.service /lib/systemd/system/blkwise-tune@.service \
		/usr/sbin/blkwise /usr/share/blkwise/blkwise-rules.yml /usr/share/blkwise/blkwise.json \
		/usr/share/blkwise/prometheus-fleet.yml /usr/share/blkwise/targets/example.json \
		/usr/share/doc/blkwise/changelog.gz /usr/share/doc/blkwise/copyright \
		/usr/share/man/man8/blkwise.8.gz | sort)
	assertEquals "the package's files" "$want" \
		"$(dpkg-deb -c "$PC_DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort)"
	assertEquals "its mode: /usr/sbin/blkwise" "-rwxr-xr-x" \
		"$(dpkg-deb -c "$PC_DEB" | awk '$6 == "./usr/sbin/blkwise" { print $1 }')"
	dpkg-deb --ctrl-tarfile "$PC_DEB" | tar -C "$BW_TMP" -xf - ./conffiles ./postinst ./postrm
	assertEquals "the conffiles" "$(printf '/etc/default/blkwise-export\n/etc/default/blkwise-tune')" \
		"$(sort "$BW_TMP/conffiles")"
	assertTrue "postinst enables blkwise-export.service" \
		"grep -q \"deb-systemd-helper enable 'blkwise-export.service'\" $BW_TMP/postinst"
	assertFalse "postinst enables no template" "grep -q 'blkwise-tune@' $BW_TMP/postinst"
	assertTrue "postrm purge removes /var/lib/blkwise" "grep -q 'rm -rf /var/lib/blkwise' $BW_TMP/postrm"
	assertTrue "blkwise --version names the version and a commit" \
		"dpkg-deb --fsys-tarfile $PC_DEB | tar -xOf - ./usr/sbin/blkwise >$BW_TMP/blkwise &&
		 chmod +x $BW_TMP/blkwise && $BW_TMP/blkwise --version | grep -q '^blkwise $PC_VERSION (commit [0-9a-f]\{12\}'"
}

# Depends: computed, not typed: dpkg-shlibdeps on the packaged binary gives
# its first part again, and on the dlopen probe (the functions export looks
# up in libmicrohttpd and GnuTLS) the rest.
test_deb_depends_computed() {
	local dir=$BW_TMP/deps shlibs dlopen
	pc_require_deb dpkg-shlibdeps || return 0
	mkdir -p "$dir/debian" && touch "$dir/debian/control"
	dpkg-deb --fsys-tarfile "$PC_DEB" | tar -C "$dir" -xf - ./usr/sbin/blkwise
	make -s -C "$BW_ROOT" build/dlopen-probe.so || { fail "make build/dlopen-probe.so"; return; }
	shlibs=$(cd "$dir" && dpkg-shlibdeps -O usr/sbin/blkwise 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
	dlopen=$(cd "$dir" && dpkg-shlibdeps -O -pdlopen -xlibc6 "$BW_ROOT/build/dlopen-probe.so" 2>/dev/null |
		sed -n 's/^dlopen:Depends=//p')
	echo "  Depends: $(dpkg-deb -f "$PC_DEB" Depends)"
	assertNotEquals "dpkg-shlibdeps names the binary's libraries" "" "$shlibs"
	assertTrue "and export's, opened with dlopen: libmicrohttpd12 and libgnutls30 ($dlopen)" \
		"echo '$dlopen' | grep -q 'libmicrohttpd12 (>= ' && echo '$dlopen' | grep -q 'libgnutls30 (>= '"
	assertEquals "Depends is what the build computed" "$shlibs, $dlopen" "$(dpkg-deb -f "$PC_DEB" Depends)"
}

# lintian at its default level says nothing of the package; a copy with a
# fault (the binary group-writable, a unit executable) it reports.
test_lintian_clean() {
	local changes=${PC_DEB%_amd64.deb}_amd64.changes bad=$BW_TMP/bad
	pc_require_deb lintian || return 0
	[ -f "$changes" ] || { fail "no $changes"; return; }
	lintian "$changes" >"$BW_TMP/lintian" 2>&1
	assertEquals "lintian: exit status" 0 $?
	sed 's/^/  lintian: /' "$BW_TMP/lintian"
	assertEquals "lintian: no tag (E:, W:) at its default level" "" "$(grep -E '^[EW]: ' "$BW_TMP/lintian")"
	dpkg-deb -R "$PC_DEB" "$bad"
	chmod 775 "$bad/usr/sbin/blkwise"
	chmod 755 "$bad/lib/systemd/system/blkwise-export.service"
	dpkg-deb -b "$bad" "$BW_TMP/bad.deb" >/dev/null
	lintian "$BW_TMP/bad.deb" >"$BW_TMP/lintian.bad" 2>&1
	assertTrue "control: lintian reports a faulty copy: $(grep -E '^[EW]: ' "$BW_TMP/lintian.bad" | head -n 2 | paste -sd' ')" \
		"grep -qE '^[EW]: ' $BW_TMP/lintian.bad"
}

# The units as the package installs them pass systemd-analyze verify (this
# machine has systemd as a package, not as its init: verify needs none).
test_deb_units_verify() {
	local root=$BW_TMP/root
	pc_require_deb systemd-analyze || return 0
	mkdir -p "$root"
	dpkg-deb -x "$PC_DEB" "$root"
	bw_units_verify "$root" blkwise-export.service blkwise-tune@sda.service 'blkwise-tune@mapper-vg\x2ddata.service'
	assertEquals "systemd-analyze verify: exit status" 0 $?
	[ -s "$BW_TMP/verify.out" ] && sed 's/^/  verify: /' "$BW_TMP/verify.out"
	assertEquals "systemd-analyze verify: nothing said" "" "$(cat "$BW_TMP/verify.out")"
}

# pc_image: the image, built once per run of the suite from the package
# (dist/image.sh: mmdebstrap, podman build); FAILs if it cannot be.
pc_image() {
	[ -f "$BW_TMP/image.built" ] && return 0
	"$BW_ROOT/dist/image.sh" "$PC_DEB" >"$BW_TMP/image.out" 2>&1 ||
		{ fail "dist/image.sh failed: $(tail -n 3 "$BW_TMP/image.out" | paste -sd' ')"; return 1; }
	touch "$BW_TMP/image.built"
}

# The image: built from the package with Debian's tools, what its layer
# holds, its entrypoint, and the binary running in a chroot of its root.
test_image_contents() {
	local tar=$BW_ROOT/build/image/blkwise_${PC_VERSION}_oci.tar dir=$BW_TMP/oci cfg layer
	pc_require_deb podman mmdebstrap jq || return 0
	pc_image || return
	assertEquals "the image's entrypoint and command" '["/usr/sbin/blkwise"] ["export"]' \
		"$(podman image inspect "$PC_IMAGE" | jq -c '.[0].Config | .Entrypoint, .Cmd' | paste -sd' ')"
	assertEquals "it exposes 9796" '{"9796/tcp":{}}' \
		"$(podman image inspect "$PC_IMAGE" | jq -c '.[0].Config.ExposedPorts')"
	mkdir -p "$dir" && tar -C "$dir" -xf "$tar" || { fail "cannot unpack $tar"; return; }
	cfg=$(jq -r '.manifests[0].digest' "$dir/index.json" | sed 's/:/\//')
	layer=$(jq -r '.layers | length' "$dir/blobs/$cfg")
	assertEquals "the OCI archive: one layer" 1 "$layer"
	layer=$(jq -r '.layers[0].digest' "$dir/blobs/$cfg" | sed 's/:/\//')
	tar -tzf "$dir/blobs/$layer" 2>/dev/null | sed 's|^\./||' >"$BW_TMP/layer.list" ||
		tar -tf "$dir/blobs/$layer" | sed 's|^\./||' >"$BW_TMP/layer.list"
	echo "  layer: $(wc -l <"$BW_TMP/layer.list") paths"
	for f in usr/sbin/blkwise usr/share/blkwise/blkwise.json lib/systemd/system/blkwise-export.service \
		var/lib/dpkg/info/blkwise.list; do
		assertTrue "the layer holds $f" "grep -qxE '(usr/)?$f' $BW_TMP/layer.list"
	done
	assertFalse "no compiler in it" "grep -qE 'bin/(clang|gcc|cc)$' $BW_TMP/layer.list"
	# The root file system the image was made from, as a chroot, with this
	# machine's /sys: the binary runs and finds its libraries there.
	mkdir -p "$BW_TMP/rootfs" && tar -C "$BW_TMP/rootfs" -xf "$BW_ROOT/build/image/rootfs.tar"
	assertEquals "dpkg in the image's root: blkwise installed" "ii" \
		"$(chroot "$BW_TMP/rootfs" dpkg-query -W -f='${db:Status-Abbrev}' blkwise | tr -d ' ')"
	chroot "$BW_TMP/rootfs" /usr/sbin/blkwise --version >"$BW_TMP/cv" 2>&1
	assertTrue "blkwise --version in a chroot of the image's root: $(cat "$BW_TMP/cv")" \
		"grep -q '^blkwise $PC_VERSION ' $BW_TMP/cv"
}

# pc_export_start OUT STATE DEV PORT [PODMAN_OPTS...]: the image's exporter
# on 127.0.0.1:PORT watching DEV, serving when this returns.
pc_export_start() {
	local out=$1 state=$2 dev=$3 port=$4 name
	shift 4
	name=$BW_TAG-export-$port
	# shellcheck disable=SC2046 # pc_run_args gives words
	bw_bg_start "$out" "serving" podman run --rm --name "$name" $(pc_run_args "$state") "$@" \
		"$PC_IMAGE" export -d "$dev" --listen 127.0.0.1:"$port" -i 0.5 --cgroups
	local rc=$?
	bw_on_cleanup "podman rm -f -t 0 $name"
	return $rc
}

# The exporter in the image and the host's, side by side on one loop device:
# the same counts of every counter and histogram of the device (per op and
# per cgroup: the reads are made in a cgroup of the test's), and the
# requests diskstats counts.
test_container_export() {
	local dev hp cp d0 d1 r0 r1 c0 c1 state=$BW_TMP/cstate mnt cg=""
	pc_require_deb podman mmdebstrap curl losetup dd || return 0
	pc_image || return
	bw_loop dev 64 shm || { fail "no loop device"; return; }
	mnt=$(cg_io_mount)
	if [ -n "$mnt" ]; then
		[ "$mnt" != "$(cg_mount)" ] || cg_enable io || { fail "enabling io for the root's children"; return; }
		cg_make cg pkg "$mnt" || { fail "mkdir cgroup"; return; }
	fi
	mkdir -p "$state"
	hp=$(bw_free_port)
	bw_bg_start "$BW_TMP/host.out" "serving" "$BW_BIN" export -d "$dev" --listen 127.0.0.1:"$hp" \
		-i 0.5 --cgroups --state-dir "$BW_TMP/hstate" || { fail "the host's export did not start"; return; }
	cp=$(bw_free_port)
	pc_export_start "$BW_TMP/ctr.out" "$state" "$dev" "$cp" ||
		{ fail "the image's export did not start: $(tail -n 2 "$BW_TMP/ctr.out.err" | paste -sd' ')"; return; }
	assertTrue "in the image it dropped to nobody: $(grep -m 1 'running as' "$BW_TMP/ctr.out.err")" \
		"grep -q 'running as nobody' $BW_TMP/ctr.out.err"
	d0=$(bw_diskstats "$dev" | awk '{ print $1 + $5 }')
	ex_page_after "http://127.0.0.1:$hp" "$(date +%s.%N)" "$BW_TMP/h0" &&
		ex_page_after "http://127.0.0.1:$cp" "$(date +%s.%N)" "$BW_TMP/c0" || { fail "no first samples"; return; }
	if [ -n "$cg" ]; then
		CG_MOUNT=$mnt cg_run "$cg" dd if=/dev/"$dev" of=/dev/null bs=4k count=600 iflag=direct status=none
	else
		dd if=/dev/"$dev" of=/dev/null bs=4k count=600 iflag=direct status=none
	fi
	dd if=/dev/zero of=/dev/"$dev" bs=8k count=200 oflag=direct status=none
	d1=$(bw_diskstats "$dev" | awk '{ print $1 + $5 }')
	ex_page_after "http://127.0.0.1:$hp" "$(date +%s.%N)" "$BW_TMP/h1" &&
		ex_page_after "http://127.0.0.1:$cp" "$(date +%s.%N)" "$BW_TMP/c1" || { fail "no later samples"; return; }
	r0=$(ex_dev_requests "$BW_TMP/h0" "$dev") r1=$(ex_dev_requests "$BW_TMP/h1" "$dev")
	c0=$(ex_dev_requests "$BW_TMP/c0" "$dev") c1=$(ex_dev_requests "$BW_TMP/c1" "$dev")
	echo "  $dev: requests: host's export $r0 -> $r1, the image's $c0 -> $c1; diskstats $d0 -> $d1"
	assertEquals "800 requests made" 800 $((d1 - d0))
	assertEquals "the host's export counted diskstats' requests" $((d1 - d0)) $((r1 - r0))
	assertEquals "the image's export counted diskstats' requests" $((d1 - d0)) $((c1 - c0))
	ex_dev_counts "$BW_TMP/h1" "$dev" >"$BW_TMP/hc"
	ex_dev_counts "$BW_TMP/c1" "$dev" >"$BW_TMP/cc"
	echo "  $(wc -l <"$BW_TMP/hc") counter and histogram series of $dev compared, $(grep -c 'cgroup=' "$BW_TMP/hc") of them per cgroup"
	if [ -n "$cg" ]; then
		assertEquals "the host's export: the reads in $cg" 600 \
			"$(cg_metric "$BW_TMP/h1" blkwise_cgroup_requests_total "$cg" read)"
	else
		echo "  (no hierarchy with the io controller here: the per-cgroup series are the root's)"
	fi
	assertTrue "per cgroup too" "grep -q 'cgroup=' $BW_TMP/hc"
	assertEquals "the image's export: every count of $dev as the host's" "$(cat "$BW_TMP/hc")" "$(cat "$BW_TMP/cc")"
}

# Without the flags docs/export.md names, the image's exporter cannot load:
# podman's seccomp filter refuses bpf() to a container without CAP_SYS_ADMIN.
test_container_needs_its_flags() {
	local dev port out=$BW_TMP/ctr.noseccomp
	pc_require_deb podman mmdebstrap losetup || return 0
	pc_image || return
	bw_loop dev 16 shm || { fail "no loop device"; return; }
	port=$(bw_free_port)
	# shellcheck disable=SC2046
	timeout 60 podman run --rm $(pc_run_args "$BW_TMP" | sed 's/seccomp=unconfined/seccomp=\/usr\/share\/containers\/seccomp.json/') \
		"$PC_IMAGE" export -d "$dev" --listen 127.0.0.1:"$port" >"$out" 2>&1
	assertEquals "with podman's seccomp filter: exit status 1" 1 $?
	assertTrue "and says the BPF load failed: $(grep -m 1 error "$out")" "grep -qi 'error.*\(bpf\|load\|permi\)' $out"
}

# dist/blkwise-daemonset.yaml: a DaemonSet whose container runs export with
# exactly the capabilities and mounts the image was run with above.
test_daemonset_matches() {
	local py
	command -v python3 >/dev/null || { bw_skip "python3 not installed"; return 0; }
	py=$(python3 - "$BW_ROOT/dist/blkwise-daemonset.yaml" <<-'EOF'
		import sys, yaml
		d = yaml.safe_load(open(sys.argv[1]))
		assert d["apiVersion"] == "apps/v1" and d["kind"] == "DaemonSet", "not a DaemonSet"
		spec = d["spec"]["template"]["spec"]
		assert d["spec"]["selector"]["matchLabels"].items() <= d["spec"]["template"]["metadata"]["labels"].items(), "selector"
		c = spec["containers"][0]
		sc = c["securityContext"]
		vols = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
		print("caps", " ".join(sorted(sc["capabilities"]["add"])))
		print("drop", " ".join(sc["capabilities"]["drop"]))
		print("mounts", " ".join(sorted("%s:%s" % (m["mountPath"], "ro" if m.get("readOnly") else "rw")
			for m in c["volumeMounts"])))
		print("hostpaths", " ".join(sorted("%s=%s" % (m["mountPath"], vols[m["name"]]) for m in c["volumeMounts"])))
		print("privileged", sc.get("privileged", False))
		print("seccomp", sc["seccompProfile"]["type"])
		print("args", " ".join(c["args"]))
		port = [p for p in c["ports"] if p["name"] == "metrics"][0]
		print("port", port["containerPort"])
		print("probe", c["readinessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["port"])
		print("tolerates", " ".join(t["operator"] for t in spec["tolerations"]))
		print("hostnetwork", spec.get("hostNetwork", False))
	EOF
	) || { fail "the DaemonSet does not parse as one: $py"; return; }
	echo "$py" | sed 's/^/  daemonset: /'
	pc_f() { echo "$py" | sed -n "s/^$1 //p"; }
	assertEquals "capabilities: the container test's" "$(echo $PC_CAPS | tr ' ' '\n' | sort | paste -sd' ')" "$(pc_f caps)"
	assertEquals "all others dropped" "ALL" "$(pc_f drop)"
	assertEquals "mounts: the container test's" "$(echo $PC_MOUNTS | tr ' ' '\n' | sort | paste -sd' ')" "$(pc_f mounts)"
	assertEquals "each from the node's own path" \
		"$(echo $PC_MOUNTS | tr ' ' '\n' | sed 's/:.*//; s/.*/&=&/' | sort | paste -sd' ')" "$(pc_f hostpaths)"
	assertEquals "not privileged" False "$(pc_f privileged)"
	assertEquals "seccomp: as the container test ran it" Unconfined "$(pc_f seccomp)"
	assertEquals "it runs export" "export --listen :9796" "$(pc_f args)"
	assertEquals "on export's port" 9796 "$(pc_f port)"
	assertEquals "ready when /metrics answers" "/metrics metrics" "$(pc_f probe)"
	assertEquals "on every node, whatever its taints" Exists "$(pc_f tolerates)"
	assertEquals "in the host's network namespace, as the test's" True "$(pc_f hostnetwork)"
}

# shellcheck disable=SC1091
. shunit2
