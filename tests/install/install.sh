#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then from another working directory: the installed
# gpuk lists its own plugins and kernels and checks a kernel with NVRTC (no GPU needed); the
# prefix moved elsewhere still works; its files name no build path; and an application built
# against it with find_package(gpuk) (examples/installed) finds the prefix's plugins and kernels
# and, on a GPU, runs argmax through the API.
# Usage: install.sh SOURCE_DIR BUILD_DIR [CMAKE_ARGS for the application's configure...]
source "$(dirname "$0")/common.sh"

prefix=$scratch/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$scratch/install.txt" ||
  { cat "$scratch/install.txt" >&2; fail "cmake --install"; }
for file in bin/gpuk lib/libgpuk_core.so lib/gpuk/plugins/libgpuk_family_reduce.so \
  share/gpuk/kernels/reduce/onepass.cu share/gpuk/kernels/include/gpuk/reduce.cuh \
  include/gpuk/gpuk.hpp lib/cmake/gpuk/gpukConfig.cmake lib/cmake/gpuk/gpukConfigVersion.cmake \
  lib/cmake/gpuk/gpukTargets.cmake share/bash-completion/completions/gpuk share/zsh/site-functions/_gpuk; do
  [ -e "$prefix/$file" ] || fail "cmake --install did not install $file"
done
[ ! -L "$prefix/share/gpuk/kernels" ] || fail "the installed kernels are a link, not a copy"
# Every file of kernels_src/ (include/, tuned/ too), and each plugin's public headers.
installed_copy() {
  local from=$1 to=$2 file
  while read -r file; do
    cmp -s "$from/$file" "$to/$file" || fail "cmake --install did not install $from/$file as $to/$file"
  done < <(cd "$from" && find . -type f)
}
installed_copy "$source_dir/kernels_src" "$prefix/share/gpuk/kernels"
for headers in "$source_dir"/plugins/*/include; do
  if [ -d "$headers" ]; then installed_copy "$headers" "$prefix/include"; fi
done

# Only the public API is installed (core/include/gpuk and each plugin's include/: 5 headers of
# core's and 2 per family at most), and each installed header compiles on its own in a .cpp, with
# nothing of the source tree, through find_package(gpuk) as C++17, the standard gpuk::gpuk asks its
# users' targets for. The same files (compared above) compile alone in a .cu under nvcc in
# gpuk_api_headers_cuda17, which is why no .cu is built here.
public_headers=$( (cd "$source_dir/core/include" && find . -type f; for h in "$source_dir"/plugins/*/include; do
  (cd "$h" && find . -type f); done) | sort)
installed_headers=$( (cd "$prefix/include" && find . -type f) | sort)
[ "$installed_headers" = "$public_headers" ] ||
  fail "installed headers differ from the public ones: $(diff <(echo "$public_headers") <(echo "$installed_headers") | tr '\n' ' ')"
# At most five of core's (gpuk.hpp, error.hpp, dtype.hpp, op_table.hpp, tuning.hpp: the tuning call)
# and two per family (its calls and its operation table): never the headers beside the sources.
families=$(ls -d "$source_dir"/plugins/*/include | wc -l)
most=$((5 + 2 * families))
[ "$(echo "$installed_headers" | wc -l)" -le "$most" ] || fail "more than $most headers installed (5 of core's, 2 per family)"
headers_project=$scratch/headers
mkdir -p "$headers_project"
{
  echo 'cmake_minimum_required(VERSION 3.25)'
  echo 'project(gpuk_installed_headers LANGUAGES CXX)'
  echo 'find_package(gpuk REQUIRED)'
  echo 'add_library(installed_headers OBJECT)'
  echo 'target_link_libraries(installed_headers PRIVATE gpuk::gpuk)'
} >"$headers_project/CMakeLists.txt"
index=0
while read -r header; do
  index=$((index + 1))
  echo "#include \"${header#./}\"" >"$headers_project/header_$index.cpp"
  echo "target_sources(installed_headers PRIVATE header_$index.cpp)" >>"$headers_project/CMakeLists.txt"
done <<<"$installed_headers"
cmake -S "$headers_project" -B "$scratch/headers-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "$@" \
  >"$scratch/headers.txt" 2>&1 && cmake --build "$scratch/headers-build" >>"$scratch/headers.txt" 2>&1 ||
  { cat "$scratch/headers.txt" >&2; fail "an installed header does not compile on its own"; }

list_from_elsewhere "$prefix/bin/gpuk" "$prefix"
check_from_elsewhere "$prefix/bin/gpuk" "$prefix/share/gpuk/kernels/reduce/onepass.cu"

# Nothing installed may lead back to the build tree: its RUNPATHs are $ORIGIN-relative.
for file in "$prefix"/bin/gpuk "$prefix"/lib/libgpuk_core.so "$prefix"/lib/gpuk/plugins/*.so; do
  readelf -d "$file" | grep -F "$build_dir" && fail "$file's dynamic section names the build tree"
  readelf -d "$file" | grep -q 'R.*PATH.*\$ORIGIN' || fail "$file has no \$ORIGIN-relative RUNPATH"
done

# A prefix is relocatable: move it, and the moved one finds its own files.
moved=$scratch/moved/prefix
mkdir -p "$scratch/moved"
mv "$prefix" "$moved"
list_from_elsewhere "$moved/bin/gpuk" "$moved"

# examples/installed, configured against the moved prefix as a user's project would be. It says
# where gpuk found its files, then runs argmax through the API: checked on a GPU, skipped (77)
# without one.
example=$source_dir/examples/installed
cmake -S "$example" -B "$scratch/example" -G Ninja -DCMAKE_PREFIX_PATH="$moved" "$@" \
  >"$scratch/example.txt" 2>&1 || { cat "$scratch/example.txt" >&2; fail "configuring examples/installed"; }
cmake --build "$scratch/example" >>"$scratch/example.txt" 2>&1 ||
  { cat "$scratch/example.txt" >&2; fail "building examples/installed"; }
status=0
(cd "$scratch/elsewhere" && "$scratch/example/installed_example") >"$scratch/example_run.txt" 2>&1 || status=$?
cat "$scratch/example_run.txt"
case "$status" in
  0) grep -q "^ok: argmax" "$scratch/example_run.txt" || fail "examples/installed printed no checked argmax"
     grep -q "^device .* (sm_[0-9]*, [0-9]* SMs, " "$scratch/example_run.txt" ||
       fail "examples/installed printed no device description" ;;
  77) grep -q "^installed_example: skipped: " "$scratch/example_run.txt" || fail "examples/installed skipped silently" ;;
  *) fail "examples/installed exited with $status" ;;
esac
grep -qx "library $moved/lib" "$scratch/example_run.txt" || fail "the application did not load the prefix's libgpuk_core"
grep -qx "plugin $moved/lib/gpuk/plugins/libgpuk_family_reduce.so" "$scratch/example_run.txt" ||
  fail "the application did not find the prefix's reduce plugin"
grep -qx "kernel $moved/share/gpuk/kernels/reduce/onepass.cu" "$scratch/example_run.txt" ||
  fail "the application did not find the prefix's kernels"
# examples/ported: three programs ported from CUB and Thrust (docs/api.md, "Ported programs"), built
# against the moved prefix; each compares gpuk's answers with the original's on a GPU, and is
# skipped (77) without one.
ported=$source_dir/examples/ported
cmake -S "$ported" -B "$scratch/ported" -G Ninja -DCMAKE_PREFIX_PATH="$moved" "$@" \
  >"$scratch/ported.txt" 2>&1 || { cat "$scratch/ported.txt" >&2; fail "configuring examples/ported"; }
cmake --build "$scratch/ported" >>"$scratch/ported.txt" 2>&1 ||
  { cat "$scratch/ported.txt" >&2; fail "building examples/ported"; }
for program in cub_radix_sort_pairs thrust_radix_sort holoinfer_max_per_channel; do
  status=0
  (cd "$scratch/elsewhere" && "$scratch/ported/$program") >"$scratch/$program.txt" 2>&1 || status=$?
  cat "$scratch/$program.txt"
  case "$status" in
    0) ;;
    77) grep -q "^$program: skipped: " "$scratch/$program.txt" || fail "examples/ported/$program skipped silently" ;;
    *) fail "examples/ported/$program exited with $status" ;;
  esac
done
echo "install: ok ($prefix, moved to $moved, examples/installed and examples/ported built with find_package(gpuk))"
