#!/usr/bin/env bash
# Builds Neovim 0.12, the first release with the native LSP inline completion client (vim.lsp.inline_completion), from
# Debian's archive only: everything downloaded is a Debian binary or source package. tests/run.sh runs it when its
# cached build is missing (NV_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/agent-lsp-client-tests/nvim-0.12); about 2 minutes
# on 2 cores, once.
#
#   NV_PREFIX=/tmp/nvim012 bash client-nvim/tests/build-neovim-0.12.sh   # -> /tmp/nvim012/bin/nvim
#
# No ready binary fits (2026-11-27): bookworm-backports has no neovim, trixie has 0.10.4, forky/sid's 0.12.4-1
# needs libc6 >= 2.42 (Debian 12 has 2.36). So it is built; what is built is linked static (nvim loads only Debian
# 12's own shared libraries, libluajit and libunibilium among them), so it needs no LD_LIBRARY_PATH:
#   1. Debian 12's own packages (apt-get install, the only change to the system): compilers, cmake 3.25, ninja,
#      dpkg-dev (dpkg-source), and the libraries it has new enough: LuaJIT 2.1.0~beta3 (and luajit, which runs Neovim's
#      code generators), unibilium 2.1.0 (>= 2.0), lua-compat53-dev 0.7 (the compat-5.3 header luv compiles with),
#      gettext, libacl1-dev. libvterm and msgpack are vendored in 0.12; iconv and libintl come with glibc.
#   2. Source packages: `apt-get source --download-only` through a PRIVATE apt configuration in $NV_WORK/apt (deb-src
#      lines for NV_SUITES on the archive the machine's own bookworm entry uses; /etc/apt is not touched; apt checks
#      every file against the signed Sources index; Release files past their Valid-Until, as a frozen archive copy
#      serves them, are said and read anyway), unpacked with dpkg-source -x (Debian's patches applied). Each
#      from the first suite in NV_SUITES whose newest version fits and whose files download (stable suites first:
#      trixie's files stay, sid's go with the next upload); what 2026-11-27 gave:
#        neovim       0.12.x                                                      0.12.4-1   forky  (= sid)
#        tree-sitter  >= 0.26 (CMake asks 0.25, Debian's 0.12 package 0.26)       0.26.11-1  forky  (trixie 0.22.6)
#        utf8proc     >= 2.10 (as Debian's 0.12 package; bookworm 2.8.0)          2.11.3-2   forky  (trixie 2.9.0)
#        libuv1       >= 1.45 (os/time.c calls uv_clock_gettime; CMake asks 1.28) 1.50.0-2   trixie (bookworm 1.44.2)
#        lua-luv      >= 1.43 (CMake), rebuilt against that libuv                  1.48.0-2-3 trixie
#        lua-lpeg     >= 1.1.0 (vim.glob uses lpeg.utfR; bookworm 1.0.2)          1.1.0-2    trixie
#      (sid's libuv1 1.53.0-1 is in its index, but its files were not downloadable here: such a 404 moves on to the
#      next suite; NV_SUITES="sid trixie" gave luv 1.51.0-1-1 and lpeg 1.1.0-4 from sid, also 7/7.) Each is built
#      static into $NV_WORK/deps with its own CMake, as Neovim's cmake.deps would (LPeg with Neovim's
#      cmake.deps/cmake/LpegCMakeLists.txt); then Neovim, with DEPS_PREFIX=$NV_WORK/deps, into NV_PREFIX.
#      No tree-sitter parsers: Neovim runs without them; only treesitter highlighting (help, Lua, Vim, markdown) and
#      :checkhealth's parser check miss them.
#
# | variable       | default                                                                                   |
# | NV_PREFIX      | /tmp/nvim012 (nvim at $NV_PREFIX/bin/nvim)                                                |
# | NV_WORK        | $NV_PREFIX-work: apt state and downloads, unpacked sources, deps prefix, logs              |
# | NV_SUITES      | "bookworm-backports trixie forky sid" (the order sources are looked for in)               |
# | NV_DEB_VERSION | empty: the newest 0.12.x of the first suite offering one; set: exactly that neovim version |
# | NV_ARCHIVE     | the URI of the machine's bookworm apt entry                                               |
# | NV_REFRESH     | 0; 1: read the archive again, rebuild whatever now resolves to another version            |
# | NV_JOBS        | 2                                                                                         |
# Prints what it does on stderr; the last line on stdout is the path of the nvim binary; exit 0 when it works, else
# non-zero with "FAILED: <the missing piece>". Needs root for apt-get install (or those packages already installed).
# Idempotent: every stage leaves a stamp and is skipped when it is there; a re-run is the smoke test alone.
# 2 cores, 2026-11-27: 107 s with Debian 12's packages installed (4 s the private apt lists, 13 s the five
# dependencies with their downloads, 78 s Neovim's compile); 120 s from nothing in a fresh debootstrap'd Debian 12
# (minbase) chroot, 14 s of it apt-get install (92 packages, 92 MB); a re-run 0.2-0.9 s.
set -euo pipefail
NV_PREFIX="${NV_PREFIX:-/tmp/nvim012}"
NV_WORK="${NV_WORK:-$NV_PREFIX-work}"
NV_SUITES="${NV_SUITES:-bookworm-backports trixie forky sid}"
NV_DEB_VERSION="${NV_DEB_VERSION:-}"
NV_REFRESH="${NV_REFRESH:-0}"
NV_JOBS="${NV_JOBS:-2}"
DEPS="$NV_WORK/deps"; LOGS="$NV_WORK/logs"; A="$NV_WORK/apt"; SRC="$NV_WORK/src"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
say() { echo "build-neovim-0.12.sh: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }
t0=$(date +%s)
mkdir -p "$LOGS" "$DEPS" "$SRC" "$A/lists/partial" "$A/archives/partial" "$A/dl"

# ---- 1. Debian 12's own packages ----------------------------------------------------------------------------------
PKGS="gcc libc6-dev make cmake ninja-build pkg-config gettext xz-utils dpkg-dev debian-archive-keyring
      libluajit-5.1-dev luajit libunibilium-dev lua-compat53-dev libacl1-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=" $p"
done
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] || die "Debian packages not installed:$missing (run as root, or apt-get install them)"
  say "apt-get install$missing (Debian 12)"
  apt-get update >"$LOGS/apt-update-system.log" 2>&1 || die "apt-get update (see $LOGS/apt-update-system.log)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >"$LOGS/apt-install.log" 2>&1 \
    || die "apt-get install$missing (see $LOGS/apt-install.log)"
fi

# ---- 2. the private apt configuration for source packages ---------------------------------------------------------
ARCHIVE="${NV_ARCHIVE:-$(apt-get indextargets --no-release-info --format '$(REPO_URI)' 'Release: bookworm' 2>/dev/null | head -1)}"
[ -n "$ARCHIVE" ] || die "no 'bookworm' entry in this machine's apt sources to take the Debian archive's URI from (set NV_ARCHIVE)"
[ -f "$KEYRING" ] || die "no $KEYRING (package debian-archive-keyring)"
for s in $NV_SUITES; do echo "deb-src [signed-by=$KEYRING] $ARCHIVE $s main"; done >"$A/sources.list.new"
cmp -s "$A/sources.list.new" "$A/sources.list" || { mv "$A/sources.list.new" "$A/sources.list"; rm -f "$A/.updated"; }
rm -f "$A/sources.list.new"
APTO=(-o "Dir::Etc::sourcelist=$A/sources.list" -o Dir::Etc::sourceparts=/nonexistent -o "Dir::State::Lists=$A/lists"
      -o "Dir::Cache::archives=$A/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
[ "$(id -u)" = 0 ] && APTO+=(-o APT::Sandbox::User=root)   # _apt may not write into $A/dl
# The archive reached here may be a frozen copy whose forky/sid Release files are past their Valid-Until (this machine's
# own apt config switches that check off); then the private configuration does too, once said (signatures still count)
[ -f "$A/.no-valid-until" ] && APTO+=(-o Acquire::Check-Valid-Until=false -o Acquire::Check-Date=false)
updated_now=0
apt_update() {  # read NV_SUITES' Sources indexes into $A/lists and boil them down to "package version" lines
  say "apt-get update, private: deb-src $NV_SUITES from $ARCHIVE (log $LOGS/apt-update.log)"
  apt-get "${APTO[@]}" update >"$LOGS/apt-update.log" 2>&1 || true
  if [ ! -f "$A/.no-valid-until" ] && grep -q 'InRelease is expired' "$LOGS/apt-update.log"; then
    say "warning: the Release files of $(grep -oE 'dists/[^/]+/InRelease is expired' "$LOGS/apt-update.log" | cut -d/ -f2 | paste -sd' ') are past their Valid-Until (a frozen archive copy): reading them anyway (Acquire::Check-Valid-Until=false; signatures still checked)"
    touch "$A/.no-valid-until"; APTO+=(-o Acquire::Check-Valid-Until=false -o Acquire::Check-Date=false)
    apt-get "${APTO[@]}" update >"$LOGS/apt-update.log" 2>&1 || true
  fi
  grep -qE '^(E|W):' "$LOGS/apt-update.log" \
    && say "warning: apt-get update: $(grep -E '^(E|W):' "$LOGS/apt-update.log" | head -2 | cut -c1-200 | paste -sd' ') (going on with the indexes it got)"
  local s f
  for s in $NV_SUITES; do
    f="$(apt-get "${APTO[@]}" indextargets --format '$(FILENAME)' 'Identifier: Sources' "Release: $s" 2>/dev/null | head -1)"
    if [ -n "$f" ] && [ -f "$f" ]; then
      /usr/lib/apt/apt-helper cat-file "$f" | awk '/^Package: /{p=$2} /^Version: /{print p, $2}' >"$A/index-$s"
    else
      say "warning: no Sources index for $s"; : >"$A/index-$s"
    fi
  done
  touch "$A/.updated"; updated_now=1
}
candidates() {  # candidates PKG MIN BELOW EXACT: "suite version" in NV_SUITES order, newest first within a suite
  local s v
  for s in $NV_SUITES; do
    awk -v p="$1" '$1 == p {print $2}' "$A/index-$s" 2>/dev/null | sort -rV | while read -r v; do
      if [ -n "$4" ]; then [ "$v" = "$4" ] || continue; fi
      dpkg --compare-versions "$v" ge "$2" || continue
      if [ -n "$3" ]; then dpkg --compare-versions "$v" lt "$3" || continue; fi
      echo "$s $v"
    done
  done
}
unpack() {  # unpack PKG VERSION DIR: dpkg-source -x (checksums checked, Debian's patches applied) into DIR
  local dsc="$A/dl/${1}_${2#*:}.dsc"
  [ -f "$dsc" ] || return 1
  rm -rf "$3" && dpkg-source --no-copy -x "$dsc" "$3" >"$LOGS/unpack-$1.log" 2>&1
}
get_source() {  # get_source PKG MIN BELOW EXACT DIR: the first candidate that downloads and unpacks -> GOT_SUITE GOT_VER
  local pkg="$1" s v tried="" want offered
  [ -f "$A/.updated" ] || apt_update
  while :; do
    tried=""
    while read -r s v; do
      tried+=" $v($s)"
      if unpack "$pkg" "$v" "$5"; then GOT_SUITE=$s; GOT_VER=$v; return 0; fi
      say "apt-get source --download-only $pkg=$v ($s)"
      if (cd "$A/dl" && apt-get "${APTO[@]}" source --download-only "$pkg=$v") >"$LOGS/apt-source-$pkg.log" 2>&1 \
         && unpack "$pkg" "$v" "$5"; then
        GOT_SUITE=$s; GOT_VER=$v; return 0
      fi
      say "  $pkg $v from $s: not downloadable or not unpackable ($(grep -h -m1 -E '^E:|error' "$LOGS/apt-source-$pkg.log" "$LOGS/unpack-$pkg.log" 2>/dev/null | head -1 | cut -c1-160)); trying the next"
    done < <(candidates "$pkg" "$2" "$3" "$4")
    [ "$updated_now" = 1 ] && break
    apt_update   # the indexes may be stale: read the archive again and try once more
  done
  if [ -n "$4" ]; then want="= $4"; else want=">= $2${3:+, < $3}"; fi
  [ -z "$tried" ] || die "source package $pkg $want: none of$tried downloads and unpacks (see $LOGS/apt-source-$pkg.log, $LOGS/unpack-$pkg.log)"
  offered="$(for s in $NV_SUITES; do v="$(awk -v p="$pkg" '$1 == p {print $2}' "$A/index-$s" 2>/dev/null | sort -rV | head -1)"; echo "$s ${v:-none}"; done | paste -sd, | sed 's/,/, /g')"
  die "no suite of '$NV_SUITES' offers source package $pkg $want (they offer: $offered)"
}
[ "$NV_REFRESH" = 1 ] && rm -f "$A/.updated"

# ---- 3. Neovim's source -------------------------------------------------------------------------------------------
NVSRC="$SRC/neovim"
old="$(cat "$NVSRC/.nvim012-source" 2>/dev/null || true)"
set -- $old
if [ -n "$old" ] && [ "$NV_REFRESH" != 1 ] && { [ -z "$NV_DEB_VERSION" ] || [ "${2:-}" = "$NV_DEB_VERSION" ]; }; then
  src_id="$old"
else
  get_source neovim 0.12~ 0.13~ "$NV_DEB_VERSION" "$NVSRC.new"
  src_id="neovim $GOT_VER $GOT_SUITE"
  [ -f "$NVSRC.new/runtime/lua/vim/lsp/inline_completion.lua" ] \
    || die "neovim $GOT_VER has no runtime/lua/vim/lsp/inline_completion.lua"
  if [ "$src_id" != "$old" ]; then
    say "Neovim source: $src_id, unpacked into $NVSRC"
    echo "$src_id" >"$NVSRC.new/.nvim012-source"; rm -rf "$NVSRC" && mv "$NVSRC.new" "$NVSRC"
  else rm -rf "$NVSRC.new"; fi
fi
ver="$(sed -nE 's/^set\(NVIM_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)\)/\2/p' "$NVSRC/CMakeLists.txt" | paste -sd.)"

# ---- 4. the dependencies Debian 12 has too old: source packages, built static into $DEPS ----------------------------
dep() {  # dep NAME PKG MIN BUILD-FUNCTION [EXTRA]: built unless $DEPS/.built-NAME already says so (EXTRA included)
  local name="$1" pkg="$2" min="$3" fn="$4" extra="${5:-}" old new d="$SRC/$1"
  old="$(cat "$DEPS/.built-$name" 2>/dev/null || true)"
  if [ -n "$old" ] && [ "$NV_REFRESH" != 1 ] && [ "${old%% *}" = "$pkg" ] && [ "$(echo "$old" | cut -d' ' -f4-)" = "$extra" ]
  then return 0; fi
  get_source "$pkg" "$min" "" "" "$d"
  new="$pkg $GOT_VER $GOT_SUITE${extra:+ $extra}"
  [ "$new" != "$old" ] || return 0
  say "building $name: $pkg $GOT_VER ($GOT_SUITE) into $DEPS (log $LOGS/$name.log)"
  local tb=$(date +%s)
  (cd "$d" && "$fn") >"$LOGS/$name.log" 2>&1 || die "building $name from $pkg $GOT_VER (see $LOGS/$name.log)"
  echo "$new" >"$DEPS/.built-$name"
  say "  $name built in $(( $(date +%s) - tb )) s"
}
CM=(-G Ninja -D CMAKE_BUILD_TYPE=Release -D CMAKE_INSTALL_PREFIX="$DEPS" -D CMAKE_INSTALL_LIBDIR=lib
    -D BUILD_SHARED_LIBS=OFF -D CMAKE_POSITION_INDEPENDENT_CODE=ON)
build_treesitter() { cmake -S . -B build "${CM[@]}" -D TREE_SITTER_FEATURE_WASM=OFF && cmake --build build -j "$NV_JOBS" \
                       && cmake --install build; }
build_utf8proc()   { cmake -S . -B build "${CM[@]}" && cmake --build build -j "$NV_JOBS" && cmake --install build; }
build_lpeg() {  # as cmake.deps does: Neovim's LpegCMakeLists.txt, a static liblpeg.a against LuaJIT's headers
  cp "$NVSRC/cmake.deps/cmake/LpegCMakeLists.txt" CMakeLists.txt \
    && cmake -S . -B build "${CM[@]}" -D CMAKE_C_FLAGS="-I/usr/include/luajit-2.1" \
    && cmake --build build -j "$NV_JOBS" && cmake --install build
}
build_libuv() {  # as cmake.deps' BuildLibuv.cmake: static only
  cmake -S . -B build "${CM[@]}" -D BUILD_TESTING=OFF -D LIBUV_BUILD_SHARED=OFF -D UV_LINT_W4=OFF \
    && cmake --build build -j "$NV_JOBS" && cmake --install build
}
build_luv() {  # as cmake.deps' BuildLuv.cmake: LuaJIT from Debian 12, libuv from $DEPS, compat-5.3 from lua-compat53-dev
  mkdir -p compat53/c-api && cp /usr/include/lua5.1/compat-5.3.h /usr/include/lua5.1/compat-5.3.c compat53/c-api/ \
    && cmake -S . -B build "${CM[@]}" -D LUA_BUILD_TYPE=System -D WITH_LUA_ENGINE=LuaJIT \
      -D LUAJIT_INCLUDE_DIR=/usr/include/luajit-2.1 -D LUA_COMPAT53_DIR="$PWD/compat53" -D WITH_SHARED_LIBUV=ON \
      -D LIBUV_INCLUDE_DIR="$DEPS/include" -D LIBUV_LIBRARIES="$DEPS/lib/libuv.a" -D BUILD_STATIC_LIBS=ON \
      -D BUILD_MODULE=OFF -D CMAKE_C_FLAGS="-w" \
    && cmake --build build -j "$NV_JOBS" && cmake --install build
}
dep treesitter tree-sitter 0.26 build_treesitter
dep utf8proc utf8proc 2.10 build_utf8proc
dep lpeg lua-lpeg 1.1.0 build_lpeg
dep libuv libuv1 1.45 build_libuv
dep luv lua-luv 1.43 build_luv "with [$(cat "$DEPS/.built-libuv")] lua-compat53-dev $(dpkg-query -W -f '${Version}' lua-compat53-dev)"
deb_libs="$(dpkg-query -W -f '${Package} ${Version}, ' libluajit-5.1-dev libunibilium-dev)"
say "deps: $(for f in treesitter utf8proc lpeg libuv luv; do cut -d' ' -f1-3 "$DEPS/.built-$f"; done | paste -sd, | sed 's/,/, /g'); Debian 12: ${deb_libs%, }"

# ---- 5. Neovim ----------------------------------------------------------------------------------------------------
build_id="$src_id | $(cat "$DEPS"/.built-* | tr '\n' ' ')| $deb_libs"
if [ "$(cat "$NV_PREFIX/.nvim012-build" 2>/dev/null)" != "$build_id" ] || [ ! -x "$NV_PREFIX/bin/nvim" ]; then
  say "configuring and building Neovim $ver into $NV_PREFIX (-j$NV_JOBS; log $LOGS/nvim-build.log)"
  B="$NVSRC/build"
  [ "$(cat "$B/.nvim012-config" 2>/dev/null)" = "$build_id" ] || rm -rf "$B"
  mkdir -p "$B"
  # DEPS_PREFIX: Neovim's find_library2 looks there first (static first), then in the system's paths
  cmake -S "$NVSRC" -B "$B" -G Ninja -D CMAKE_BUILD_TYPE=Release -D CMAKE_INSTALL_PREFIX="$NV_PREFIX" \
    -D DEPS_PREFIX="$DEPS" >"$LOGS/nvim-configure.log" 2>&1 || die "cmake configure of Neovim (see $LOGS/nvim-configure.log)"
  echo "$build_id" >"$B/.nvim012-config"
  tb=$(date +%s)
  cmake --build "$B" -j "$NV_JOBS" >"$LOGS/nvim-build.log" 2>&1 || die "building Neovim (see $LOGS/nvim-build.log)"
  say "  Neovim compiled in $(( $(date +%s) - tb )) s"
  rm -f "$NV_PREFIX/.nvim012-build"
  cmake --install "$B" >"$LOGS/nvim-install.log" 2>&1 || die "cmake --install (see $LOGS/nvim-install.log)"
  echo "$build_id" >"$NV_PREFIX/.nvim012-build"
fi

# ---- 6. smoke test ------------------------------------------------------------------------------------------------
NVIM="$NV_PREFIX/bin/nvim"
v1="$("$NVIM" --version 2>&1 | head -1)" || die "$NVIM --version: $v1"
case "$v1" in "NVIM v0.12."*) ;; *) die "$NVIM --version says \"$v1\", not 0.12.x" ;; esac
[ "$v1" = "NVIM v$ver" ] || die "$NVIM --version says \"$v1\"; the source is $ver"
H="$NV_WORK/smoke-home"; rm -rf "$H"; mkdir -p "$H"
smoke() { HOME="$H" XDG_CONFIG_HOME="$H/c" XDG_STATE_HOME="$H/s" XDG_DATA_HOME="$H/d" XDG_CACHE_HOME="$H/k" \
            timeout 60 "$NVIM" --headless --clean "$@" 2>&1; }
out="$(smoke +'lua assert(vim.lsp.inline_completion)' +q)" && [ -z "$out" ] \
  || die "nvim --headless --clean +'lua assert(vim.lsp.inline_completion)' +q: ${out:-exit status not 0}"
out="$(smoke -c 'lua local l = vim.lpeg.version; io.stdout:write(type(vim.lsp.inline_completion.enable), " ", type(vim.lsp.inline_completion.get), " lpeg ", type(l) == "function" and l() or l, ", libuv ", vim.uv.version_string(), ", ts-abi ", vim.treesitter.language_version, ", ", jit.version, "\n")' -c 'qa!')" \
  || die "nvim --headless smoke test: $out"
case "$out" in "function function "*) ;; *) die "vim.lsp.inline_completion.enable/get missing: $out" ;; esac
say "$v1 ok: vim.lsp.inline_completion.enable/get present; ${out#function function }; $(( $(date +%s) - t0 )) s"
echo "$NVIM"
