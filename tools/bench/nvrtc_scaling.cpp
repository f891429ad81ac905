// NVRTC's scaling: N programs of one kernel file (block_size_x varied as a -D definition, so that
// each is its own program) compiled by T threads of one process (t), T processes (p), or T
// processes forked after cuInit and a context (c): the wall time and the time per program.
// HOIST="#include <...>" instead puts the file's first line above and block_size_x after it, as
// gpuk does for a precompiled header (core/src/jit/pch_source.hpp; add --pch --pch-dir=DIR).
//
// Build (CUDA: the toolkit's folder), then run:
//   c++ -O2 tools/bench/nvrtc_scaling.cpp -I$CUDA/include -L$CUDA/lib64 -L$CUDA/lib64/stubs -lnvrtc -lcuda -lpthread -o nvrtc_scaling
//   ./nvrtc_scaling KT_EXAMPLES_DIR/spmv.cu spmv_kernel 16 256 p -Dthreads_per_row=32 -Dread_only=1
//
// docs/PERFORMANCE.md, "NVRTC in compile processes", has its numbers on an H200 machine.
#include <cuda.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
std::string src, kernel;
std::vector<std::string> extra;
void compile(int i) {
  const std::string bx = std::to_string(32 * (1 + i % 32));
  std::vector<std::string> o = {"--gpu-architecture=sm_90", "-std=c++17", "-DGPUK_NVRTC=1"};
  std::string text = src;
  if (const char* head = getenv("HOIST")) {  // the file's first line moved above, the definition after it
    text = std::string(head) + "\nnamespace gpuk_pch {}\n#define block_size_x " + bx + "\n" + src.substr(src.find('\n') + 1);
  } else {
    o.push_back("-Dblock_size_x=" + bx);
  }
  o.insert(o.end(), extra.begin(), extra.end());
  std::vector<const char*> a; for (auto& s : o) a.push_back(s.c_str());
  nvrtcProgram p; nvrtcCreateProgram(&p, text.c_str(), "k.cu", 0, nullptr, nullptr);
  nvrtcAddNameExpression(p, kernel.c_str());
  if (nvrtcCompileProgram(p, a.size(), a.data()) != NVRTC_SUCCESS) {
    size_t l; nvrtcGetProgramLogSize(p, &l); std::string s(l, 0); nvrtcGetProgramLog(p, s.data()); fprintf(stderr, "%s\n", s.c_str()); exit(1); }
  nvrtcDestroyProgram(&p);
}
int main(int argc, char** argv) {
  std::ifstream f(argv[1]); std::stringstream ss; ss << f.rdbuf(); src = ss.str();
  kernel = argv[2]; int T = atoi(argv[3]), N = atoi(argv[4]); bool procs = argv[5][0] == 'p' || argv[5][0] == 'c';
  if (argv[5][0] == 'c') {  // CUDA started in this process before the fork
    CUdevice d; CUcontext c; printf("cuInit %d ", cuInit(0)); cuDeviceGet(&d, 0); printf("ctx %d\n", cuCtxCreate(&c, nullptr, 0, d));
  }
  for (int i = 6; i < argc; ++i) extra.push_back(argv[i]);
  auto t0 = std::chrono::steady_clock::now();
  if (procs) {
    for (int t = 0; t < T; ++t) if (fork() == 0) { for (int i = t; i < N; i += T) compile(i); _exit(0); }
    for (int t = 0; t < T; ++t) wait(nullptr);
  } else {
    std::atomic<int> next{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < T; ++t) ts.emplace_back([&] { for (int i; (i = next++) < N;) compile(i); });
    for (auto& t : ts) t.join();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%s%-9s %-7s %2d programs %3d wall %.2f s  %.1f ms per program  %.1f thread-ms per program\n", getenv("HOIST") ? "pch " : "", kernel.c_str(), procs ? "procs" : "threads", T, N, s, s / N * 1000, s * T / N * 1000);
}
