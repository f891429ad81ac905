#!/usr/bin/env bash
# A build tree moved elsewhere with its sources keeps working: the CLI, libgpuk_core and the
# plugins (lib/) and the link to the kernels (share/) are copied under a new root, keeping where
# the build tree sits relative to the sources; from another working directory the moved gpuk
# lists the moved plugins and kernels (none of the original tree's), sees a kernel file dropped
# into the moved kernels_src/ without a rebuild, and checks a kernel with NVRTC.
# Usage: relocate.sh SOURCE_DIR BUILD_DIR
source "$(dirname "$0")/common.sh"

# The new root holds the source and build trees at their old absolute paths below it, so that the
# build tree's relative link to kernels_src/ holds wherever the build tree was configured.
root=$scratch/moved
moved_source=$root$source_dir
moved_build=$root$build_dir
mkdir -p "$moved_source" "$moved_build"
cp -R "$source_dir/kernels_src" "$moved_source/"
cp -R -P "$build_dir/gpuk" "$build_dir/lib" "$build_dir/share" "$moved_build/"

list_from_elsewhere "$moved_build/gpuk" "$root"
grep -q "$moved_source/kernels_src/reduce/onepass.cu" "$scratch/list.txt" ||
  fail "the moved gpuk does not list the moved kernels_src/"
grep -q "$moved_build/lib/gpuk/plugins/libgpuk_family_reduce.so" "$scratch/list.txt" ||
  fail "the moved gpuk does not load the moved plugins"

# A drop-in kernel file is seen at once.
cat >"$moved_source/kernels_src/reduce/dropped_in.cu" <<'CU'
/* gpuk
family: reduce
operations: [max]
summary: dropped into the moved tree
launch:
  - {entry: dropped_in, grid: 1, block: 32}
*/
template <class R> __global__ void dropped_in(const typename R::T* in, long long n,
                                              typename R::Acc* out, typename R::Acc* p, unsigned* c) {}
CU
list_from_elsewhere "$moved_build/gpuk" "$root"
grep -q "$moved_source/kernels_src/reduce/dropped_in.cu" "$scratch/list.txt" ||
  fail "the moved gpuk does not see a kernel file dropped into kernels_src/"

check_from_elsewhere "$moved_build/gpuk" "$moved_source/kernels_src/reduce/single_thread.cu"
echo "relocate: ok (build tree and kernels_src moved under $root)"
