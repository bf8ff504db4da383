// Memory-model litmus tests on the GPU: message passing (MP), store buffering (SB), load
// buffering (LB) and single-copy atomicity of an 8-byte word (SCA), each as weak, relaxed,
// release/acquire and fence.sc variants at CTA and GPU scope (SCA: no fence.sc, as each thread makes
// one access), with the two threads in one block (different warps) or in two blocks. Method after
// ../shared/references/ptx-memory-model-litmus.txt, with its lesson: fresh memory per iteration
// (every instance has its own, zeroed, never-reused locations, one 128-byte line each), many
// instances per launch, several launches.
//
//   MP  P0: data = 1; flag = 1          P1: r0 = flag; r1 = data      weak: r0 = 1, r1 = 0
//   SB  P0: x = 1; r0 = y               P1: y = 1; r1 = x             weak: r0 = 0, r1 = 0
//   LB  P0: r0 = x; y = 1               P1: r1 = y; x = 1             weak: r0 = 1, r1 = 1
//   SCA P0: x64 = {1, 1}                P1: {r0, r1} = x64            weak: r0 != r1 (torn)
//
// Variants: weak = plain ld/st.global; relaxed = .relaxed.<scope>; rel/acq = the second store
// .release and the first load .acquire (the rest relaxed); fence.sc = relaxed accesses with
// fence.sc.<scope> between each thread's two. SCA's accesses are 64-bit (.b64) forms of the same.
// The program asserts zero weak outcomes where the library relies on them (MP with
// release/acquire at GPU scope, in one block and in two: the decoupled look-back publishes its
// flags so; SCA relaxed at GPU scope: the 32-bit look-back's {sum, flag} words) and where the PTX
// memory model forbids them (MP with release/acquire or fence.sc, SB with fence.sc, SCA with
// strong accesses, at a scope that holds both threads); the rest is data (docs/memory-model.md).
// Exit 0: all assertions hold; 1: one failed; 77: no GPU.
//   usage: litmus [--iterations N] [--csv FILE]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace {

enum pattern : int { mp, sb, lb, sca };
enum variant : int { weak, relaxed, release_acquire, fence_sc };
enum scope : int { cta, gpu };
enum placement : int { one_block, two_blocks };

const char* const pattern_names[] = {"MP", "SB", "LB", "SCA"};
const char* const variant_names[] = {"weak", "relaxed", "rel/acq", "fence.sc"};
const char* const scope_names[] = {"cta", "gpu"};
const char* const placement_names[] = {"one block", "two blocks"};

constexpr int line_words = 32;  // one instance's location per 128-byte line

// The accesses, by variant and scope: each an inline-PTX instruction the compiler may not move.
__device__ __forceinline__ void store(unsigned* p, unsigned v, int var, int sc, bool second) {
  if (var == weak) {
    asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  } else if (var == release_acquire && second) {
    if (sc == gpu) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else asm volatile("st.release.cta.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  } else {
    if (sc == gpu) asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else asm volatile("st.relaxed.cta.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  }
}

__device__ __forceinline__ unsigned load(const unsigned* p, int var, int sc, bool first) {
  unsigned v;
  if (var == weak) {
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  } else if (var == release_acquire && first) {
    if (sc == gpu) asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else asm volatile("ld.acquire.cta.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  } else {
    if (sc == gpu) asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else asm volatile("ld.relaxed.cta.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  }
  return v;
}

// SCA's 8-byte accesses, by variant and scope: a release store and an acquire load as rel/acq.
__device__ __forceinline__ void store64(unsigned long long* p, unsigned long long v, int var, int sc) {
  if (var == weak) {
    asm volatile("st.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  } else if (var == release_acquire) {
    if (sc == gpu) asm volatile("st.release.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else asm volatile("st.release.cta.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  } else {
    if (sc == gpu) asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else asm volatile("st.relaxed.cta.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  }
}

__device__ __forceinline__ unsigned long long load64(const unsigned long long* p, int var, int sc) {
  unsigned long long v;
  if (var == weak) {
    asm volatile("ld.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } else if (var == release_acquire) {
    if (sc == gpu) asm volatile("ld.acquire.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else asm volatile("ld.acquire.cta.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  } else {
    if (sc == gpu) asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else asm volatile("ld.relaxed.cta.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  }
  return v;
}

__device__ __forceinline__ void fence(int var, int sc) {
  if (var != fence_sc) return;
  if (sc == gpu) asm volatile("fence.sc.gpu;" ::: "memory");
  else asm volatile("fence.sc.cta;" ::: "memory");
}

// Instance i's two threads: one block of 2T threads (P0 = the first T, P1 = the rest: different
// warps) or blocks 2j and 2j + 1 of T threads each. P1's thread t takes instance (7 t + 3) mod T of
// the pair's T, so that partners sit in different lanes and warps.
__global__ void litmus(int pat, int var, int sc, int place, unsigned* x, unsigned* y, unsigned* r0, unsigned* r1) {
  const unsigned T = place == one_block ? blockDim.x / 2 : blockDim.x;
  const unsigned group = place == one_block ? blockIdx.x : blockIdx.x / 2;
  const bool second = place == one_block ? threadIdx.x >= T : (blockIdx.x & 1) != 0;
  const unsigned t = place == one_block ? threadIdx.x % T : threadIdx.x;
  const unsigned local = second ? (7 * t + 3) % T : t;
  const std::size_t i = std::size_t{group} * T + local;
  unsigned* xi = x + i * line_words;
  unsigned* yi = y + i * line_words;
  if (place == one_block) __syncthreads();  // start the partners together
  if (pat == mp) {
    if (!second) {
      store(xi, 1, var, sc, false);  // data
      fence(var, sc);
      store(yi, 1, var, sc, true);  // flag
    } else {
      const unsigned f = load(yi, var, sc, true);
      fence(var, sc);
      const unsigned d = load(xi, var, sc, false);
      r0[i] = f;
      r1[i] = d;
    }
  } else if (pat == sb) {
    if (!second) {
      store(xi, 1, var, sc, false);
      fence(var, sc);
      r0[i] = load(yi, var, sc, false);
    } else {
      store(yi, 1, var, sc, false);
      fence(var, sc);
      r1[i] = load(xi, var, sc, false);
    }
  } else if (pat == sca) {  // one 8-byte word (the line's first two words), {1, 1} or read whole
    auto* xi64 = reinterpret_cast<unsigned long long*>(xi);
    if (!second) {
      store64(xi64, 0x0000000100000001ull, var, sc);
    } else {
      const unsigned long long v = load64(xi64, var, sc);
      r0[i] = static_cast<unsigned>(v);
      r1[i] = static_cast<unsigned>(v >> 32);
    }
  } else {  // lb
    if (!second) {
      r0[i] = load(xi, var, sc, true);
      fence(var, sc);
      store(yi, 1, var, sc, true);
    } else {
      r1[i] = load(yi, var, sc, true);
      fence(var, sc);
      store(xi, 1, var, sc, true);
    }
  }
}

bool weak_outcome(int pat, unsigned a, unsigned b) {
  if (pat == mp) return a == 1 && b == 0;
  if (pat == sb) return a == 0 && b == 0;
  if (pat == sca) return a != b;
  return a == 1 && b == 1;
}

bool relied_on(int pat, int var, int sc) {
  return (pat == mp && var == release_acquire && sc == gpu) || (pat == sca && var == relaxed && sc == gpu);
}

bool forbidden_by_model(int pat, int var, int sc, int place) {
  const bool scope_holds_both = sc == gpu || place == one_block;
  if (!scope_holds_both) return false;
  if (pat == mp) return var == release_acquire || var == fence_sc;
  if (pat == sb) return var == fence_sc;
  if (pat == sca) return var != weak;  // conflicting morally strong accesses: single-copy atomic
  return false;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "litmus: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  long long iterations = 4 << 20;
  const char* csv_path = nullptr;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--iterations") && a + 1 < argc) {
      iterations = std::atoll(argv[++a]);
    } else if (!std::strcmp(argv[a], "--csv") && a + 1 < argc) {
      csv_path = argv[++a];
    } else {
      std::fprintf(stderr, "usage: litmus [--iterations N] [--csv FILE]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("litmus: no CUDA device: skipped\n");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  constexpr unsigned T = 256;                 // instances per block (pair of blocks)
  constexpr std::size_t per_launch = 1 << 20;  // instances per launch: fresh, zeroed locations each
  const long long launches = (iterations + static_cast<long long>(per_launch) - 1) / static_cast<long long>(per_launch);
  unsigned *x = nullptr, *y = nullptr, *r0 = nullptr, *r1 = nullptr;
  check(cudaMalloc(&x, per_launch * line_words * sizeof(unsigned)), "cudaMalloc");
  check(cudaMalloc(&y, per_launch * line_words * sizeof(unsigned)), "cudaMalloc");
  check(cudaMalloc(&r0, per_launch * sizeof(unsigned)), "cudaMalloc");
  check(cudaMalloc(&r1, per_launch * sizeof(unsigned)), "cudaMalloc");
  std::vector<unsigned> h0(per_launch), h1(per_launch);
  FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
  if (csv) std::fprintf(csv, "pattern,variant,scope,placement,iterations,r00,r01,r10,r11,weak,relied_on,forbidden_by_model\n");
  std::printf("device: %s (sm_%d%d), %lld iterations per variant, %zu instances per launch\n", prop.name, prop.major,
              prop.minor, launches * static_cast<long long>(per_launch), per_launch);
  std::printf("%-3s %-9s %-4s %-11s %12s %12s %12s %12s %10s  %s\n", "", "variant", "scope", "placement", "r=(0,0)",
              "(0,1)", "(1,0)", "(1,1)", "weak", "");
  int failures = 0;
  for (int pat = mp; pat <= sca; ++pat) {
    for (int var = weak; var <= fence_sc; ++var) {
      if (pat == sca && var == fence_sc) continue;  // one access a thread: nothing to fence
      for (int sc = cta; sc <= gpu; ++sc) {
        if (var == weak && sc == gpu) continue;  // weak accesses have no scope
        for (int place = one_block; place <= two_blocks; ++place) {
          long long counts[4] = {0, 0, 0, 0};
          for (long long l = 0; l < launches; ++l) {
            check(cudaMemset(x, 0, per_launch * line_words * sizeof(unsigned)), "cudaMemset");
            check(cudaMemset(y, 0, per_launch * line_words * sizeof(unsigned)), "cudaMemset");
            check(cudaMemset(r0, 0, per_launch * sizeof(unsigned)), "cudaMemset");
            check(cudaMemset(r1, 0, per_launch * sizeof(unsigned)), "cudaMemset");
            const unsigned groups = static_cast<unsigned>(per_launch / T);
            if (place == one_block) litmus<<<groups, 2 * T>>>(pat, var, sc, place, x, y, r0, r1);
            else litmus<<<2 * groups, T>>>(pat, var, sc, place, x, y, r0, r1);
            check(cudaGetLastError(), "launch");
            check(cudaMemcpy(h0.data(), r0, per_launch * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
            check(cudaMemcpy(h1.data(), r1, per_launch * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
            for (std::size_t i = 0; i < per_launch; ++i) ++counts[(h0[i] & 1) * 2 + (h1[i] & 1)];
          }
          long long weak_count = 0;
          for (unsigned a = 0; a < 2; ++a) {
            for (unsigned b = 0; b < 2; ++b) weak_count += weak_outcome(pat, a, b) ? counts[a * 2 + b] : 0;
          }
          const bool must_hold = relied_on(pat, var, sc) || forbidden_by_model(pat, var, sc, place);
          const bool failed = must_hold && weak_count != 0;
          failures += failed;
          std::printf("%-3s %-9s %-4s %-11s %12lld %12lld %12lld %12lld %10lld  %s%s\n", pattern_names[pat],
                      variant_names[var], var == weak ? "-" : scope_names[sc], placement_names[place], counts[0],
                      counts[1], counts[2], counts[3], weak_count,
                      relied_on(pat, var, sc) ? "relied on; " : "",
                      failed ? "FAILED: weak outcomes seen" : must_hold ? "none allowed: none seen" : "");
          if (csv) {
            std::fprintf(csv, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d\n", pattern_names[pat], variant_names[var],
                         var == weak ? "-" : scope_names[sc], placement_names[place],
                         launches * static_cast<long long>(per_launch), counts[0], counts[1], counts[2], counts[3],
                         weak_count, relied_on(pat, var, sc) ? 1 : 0, forbidden_by_model(pat, var, sc, place) ? 1 : 0);
          }
        }
      }
    }
  }
  if (csv) std::fclose(csv);
  cudaFree(x);
  cudaFree(y);
  cudaFree(r0);
  cudaFree(r1);
  std::printf("%s\n", failures ? "litmus: FAILED" : "litmus: every assertion holds");
  return failures ? 1 : 0;
}
