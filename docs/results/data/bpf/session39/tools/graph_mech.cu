// Graph mechanics of a particle-filter tick: what the launch structure costs per tick.
// A: "particles" (G blocks x 512 threads, reads x, lw and writes x2, lw2: 16 B/particle, plus ALU work),
//    one summary per block. B: "finish" (1 block, 256 threads, PDL after A): reduces the summaries,
//    writes s->flag (0), sets the conditional. C: the body of the If node (never taken).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

struct scalars { unsigned tick; int flag; float total; unsigned limit; unsigned marker; unsigned errors; int resample; int slow; };

__device__ inline void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ inline void pdl_launch() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

__global__ void __launch_bounds__(512) particles(const float* x, const float* lw, float* x2, float* lw2, size_t n,
                                                 float* summaries, const scalars* s, int alu) {
  float acc = 0.f;
  const unsigned tick = s->tick;
  for (size_t i = blockIdx.x * 512ull + threadIdx.x; i < n; i += gridDim.x * 512ull) {
    float a = x[i], b = lw[i];
    float v = a + tick;
    for (int k = 0; k < alu; ++k) v = __fmaf_rn(v, 1.0001f, 0.5f) * 0.999f;
    x2[i] = v;
    lw2[i] = b + v * 1e-6f;
    acc += b;
  }
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[16];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 16; ++i) t += w[i];
    summaries[blockIdx.x] = t;
  }
}

template <bool Opens, bool Pdl>
__global__ void finish(const float* summaries, int count, scalars* s, cudaGraphConditionalHandle h) {
  const unsigned tick = s->tick;
  if (Pdl) pdl_wait();
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += 256) acc += summaries[i];
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 8; ++i) t += w[i];
    s->total = t;
    s->flag = 0;
    s->tick = tick + 1;
    if (Opens) cudaGraphSetConditional(h, 0u);
  }
}

// While-loop variant: B also sets the loop's handle (continue while tick < limit).
__global__ void finish_loop(const float* summaries, int count, scalars* s, cudaGraphConditionalHandle h_if,
                            cudaGraphConditionalHandle h_while) {
  const unsigned tick = s->tick;
  pdl_wait();
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += 256) acc += summaries[i];
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 8; ++i) t += w[i];
    s->total = t;
    s->flag = 0;
    s->tick = tick + 1;
    cudaGraphSetConditional(h_if, 0u);
    cudaGraphSetConditional(h_while, tick + 1 < s->limit ? 1u : 0u);
  }
}

__global__ void body(scalars* s) { if (threadIdx.x == 0) s->total += 1; }

// A gated kernel: reads the gate (written by a kernel that finished before the chain began), exits.
__global__ void gated(const scalars* s, float* sink) {
  if (s->flag == 0) return;
  pdl_wait();
  pdl_launch();
  sink[blockIdx.x] = 1;
}


// The resampler stand-in: 5 short kernels; the last one writes marker = tick (checked by the next A).
__global__ void stage(scalars* s, float* sink, int last) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && last) {
    if (s->slow) {
      unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
      for (;;) { unsigned long long t1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)); if (t1 - t0 > 20000) break; }
    }
    s->marker = s->tick;
  }
  sink[blockIdx.x % 8192] = 1;
}
__global__ void check_marker(scalars* s) {
  if (threadIdx.x == 0 && s->resample && s->marker != s->tick) atomicAdd(&s->errors, 1u);
}
__device__ cudaGraphExec_t tail_graph;
__global__ void finish_cond(const float* summaries, int count, scalars* s, cudaGraphConditionalHandle h) {
  const unsigned tick = s->tick;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += 256) acc += summaries[i];
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 8; ++i) t += w[i];
    s->total = t;
    s->tick = tick + 1;
    cudaGraphSetConditional(h, s->resample ? 1u : 0u);
  }
}
template <bool Launch>
__global__ void finish_tail(const float* summaries, int count, scalars* s, cudaGraphConditionalHandle) {
  const unsigned tick = s->tick;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += 256) acc += summaries[i];
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 8; ++i) t += w[i];
    s->total = t;
    s->tick = tick + 1;
    if (Launch && s->resample) {
      cudaError_t e = cudaGraphLaunch(tail_graph, cudaStreamGraphTailLaunch);
      if (e != cudaSuccess) atomicAdd(&s->errors, 1000000u);
    }
  }
}
__device__ cudaGraphDeviceNode_t dev_nodes[5];
template <bool Enable>
__global__ void finish_toggle(const float* summaries, int count, scalars* s, cudaGraphConditionalHandle) {
  const unsigned tick = s->tick;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += 256) acc += summaries[i];
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 8; ++i) t += w[i];
    s->total = t;
    s->tick = tick + 1;
    for (int k = 0; k < 5; ++k) cudaGraphKernelNodeSetEnabled(dev_nodes[k], Enable);
  }
}

static void launch_pdl(void (*k)(const float*, int, scalars*, cudaGraphConditionalHandle), cudaStream_t st,
                       const float* sm, int count, scalars* s, cudaGraphConditionalHandle h) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c{};
  c.gridDim = 1; c.blockDim = 256; c.stream = st; c.attrs = &a; c.numAttrs = 1;
  CK(cudaLaunchKernelEx(&c, k, sm, count, s, h));
}

struct env {
  float *x, *lw, *x2, *lw2, *sm, *sink;
  scalars* s;
  size_t n; int G; int alu;
};

static void add_if(cudaStream_t on, cudaStream_t bodys, cudaGraphConditionalHandle h, scalars* s) {
  cudaStreamCaptureStatus cs; cudaGraph_t g; const cudaGraphNode_t* deps; size_t nd;
  CK(cudaStreamGetCaptureInfo(on, &cs, nullptr, &g, &deps, nullptr, &nd));
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeIf; p.conditional.size = 1;
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, g, deps, nullptr, nd, &p));
  CK(cudaStreamUpdateCaptureDependencies(on, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t b = p.conditional.phGraph_out[0];
  CK(cudaStreamBeginCaptureToGraph(bodys, b, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  body<<<1, 32, 0, bodys>>>(s);
  CK(cudaStreamEndCapture(bodys, &b));
}

static cudaGraphConditionalHandle handle_of(cudaStream_t on, unsigned dflt = 0, unsigned flags = 0) {
  cudaStreamCaptureStatus cs; cudaGraph_t g;
  CK(cudaStreamGetCaptureInfo(on, &cs, nullptr, &g));
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g, dflt, flags));
  return h;
}

// variant: 0 = A, B(pdl), If ; 1 = A, B(pdl) ; 2 = A, B(plain) ; 3 = A, B(pdl), 5 gated kernels (pdl)
//          4 = A(pdl!), B(pdl), If  [A early: only valid for measuring; A reads nothing B writes but tick]
static void tick_body(const env& e, int variant, cudaStream_t on, cudaStream_t bodys) {
  particles<<<e.G, 512, 0, on>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
  if (variant == 0) {
    auto h = handle_of(on);
    launch_pdl(finish<true, true>, on, e.sm, e.G, e.s, h);
    add_if(on, bodys, h, e.s);
  } else if (variant == 1) {
    launch_pdl(finish<false, true>, on, e.sm, e.G, e.s, {});
  } else if (variant == 2) {
    finish<false, false><<<1, 256, 0, on>>>(e.sm, e.G, e.s, {});
  } else if (variant == 3) {
    launch_pdl(finish<false, true>, on, e.sm, e.G, e.s, {});
    cudaLaunchAttribute a{};
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
    const int grids[5] = {1, 1056, 8192, 1, 8192};
    for (int k = 0; k < 5; ++k) {
      cudaLaunchConfig_t c{};
      c.gridDim = grids[k]; c.blockDim = 256; c.stream = on;
      if (k > 0) { c.attrs = &a; c.numAttrs = 1; }
      CK(cudaLaunchKernelEx(&c, gated, (const scalars*)e.s, e.sink));
    }
  }
}

static const int stage_grids[5] = {1, 1056, 8192, 1, 8192};
static void enqueue_stages(cudaStream_t on, const env& e, bool pdl, bool updatable, cudaGraphDeviceNode_t* nodes) {
  for (int k = 0; k < 5; ++k) {
    cudaLaunchAttribute a[2]{};
    int na = 0;
    if (pdl && k > 0) {
      a[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      a[na].val.programmaticStreamSerializationAllowed = 1;
      ++na;
    }
    if (updatable) {
      a[na].id = cudaLaunchAttributeDeviceUpdatableKernelNode;
      a[na].val.deviceUpdatableKernelNode.deviceUpdatable = 1;
      ++na;
    }
    cudaLaunchConfig_t c{};
    c.gridDim = stage_grids[k]; c.blockDim = 256; c.stream = on; c.attrs = a; c.numAttrs = na;
    CK(cudaLaunchKernelEx(&c, stage, e.s, e.sink, k == 4 ? 1 : 0));
    if (updatable) nodes[k] = a[na - 1].val.deviceUpdatableKernelNode.devNode;
  }
}

static void set_scalars(const env& e, int resample, int slow) {
  scalars init{0, 0, 0.f, 0, 0, 0, resample, slow};
  CK(cudaMemcpy(e.s, &init, sizeof init, cudaMemcpyHostToDevice));
}

static void new_variants(const env& e, cudaStream_t st, cudaStream_t cap, cudaStream_t bodys) {
  const int ticks = 2000;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  // The tail graph: the 5 stages, instantiated for device launch.
  cudaGraphExec_t tail{};
  {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
    enqueue_stages(cap, e, true, false, nullptr);
    CK(cudaStreamEndCapture(cap, &g));
    cudaError_t r = cudaGraphInstantiateWithFlags(&tail, g, cudaGraphInstantiateFlagDeviceLaunch);
    if (r != cudaSuccess) {
      printf("tail graph with PDL edges: instantiate for device launch failed: %s; retrying without PDL\n", cudaGetErrorString(r));
      cudaGetLastError();
      CK(cudaGraphDestroy(g));
      CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
      enqueue_stages(cap, e, false, false, nullptr);
      CK(cudaStreamEndCapture(cap, &g));
      CK(cudaGraphInstantiateWithFlags(&tail, g, cudaGraphInstantiateFlagDeviceLaunch));
    }
    CK(cudaGraphUpload(tail, st));
    CK(cudaMemcpyToSymbol(tail_graph, &tail, sizeof tail));
    CK(cudaStreamSynchronize(st));
  }
  // variant: 10 If{stages} taken, 13 If{stages} not taken, 11 tail taken, 12 tail not taken,
  //          14 updatable disabled, 15 updatable enabled, 16 stages inline (plain), 17 stages inline (pdl)
  for (int variant : {10, 13, 11, 12, 14, 15, 16, 17, 18}) {
    const bool verify = variant == 18;
    const int resample = (variant == 10 || variant == 11 || variant == 15 || variant == 16 || variant == 17 || verify) ? 1 : 0;
    cudaGraph_t g; cudaGraphExec_t x;
    CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
    if (verify) check_marker<<<1, 32, 0, cap>>>(e.s);
    particles<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
    cudaGraphDeviceNode_t nodes[5]{};
    if (variant == 10 || variant == 13) {
      auto h = handle_of(cap);
      launch_pdl(finish_cond, cap, e.sm, e.G, e.s, h);
      cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
      CK(cudaStreamGetCaptureInfo(cap, &cs, nullptr, &gg, &deps, nullptr, &nd));
      cudaGraphNodeParams p{};
      p.type = cudaGraphNodeTypeConditional;
      p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeIf; p.conditional.size = 1;
      cudaGraphNode_t node;
      CK(cudaGraphAddNode(&node, gg, deps, nullptr, nd, &p));
      CK(cudaStreamUpdateCaptureDependencies(cap, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
      cudaGraph_t bg = p.conditional.phGraph_out[0];
      CK(cudaStreamBeginCaptureToGraph(bodys, bg, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
      enqueue_stages(bodys, e, true, false, nullptr);
      CK(cudaStreamEndCapture(bodys, &bg));
    } else if (variant == 11 || variant == 12 || verify) {
      launch_pdl(finish_tail<true>, cap, e.sm, e.G, e.s, {});
    } else if (variant == 14 || variant == 15) {
      launch_pdl(variant == 14 ? finish_toggle<false> : finish_toggle<true>, cap, e.sm, e.G, e.s, {});
      enqueue_stages(cap, e, false, true, nodes);
    } else {
      launch_pdl(finish<false, true>, cap, e.sm, e.G, e.s, {});
      enqueue_stages(cap, e, variant == 17, false, nullptr);
    }
    CK(cudaStreamEndCapture(cap, &g));
    cudaError_t r = cudaGraphInstantiate(&x, g, 0);
    if (r != cudaSuccess) { printf("variant %d: instantiate failed: %s\n", variant, cudaGetErrorString(r)); cudaGetLastError(); continue; }
    if (variant == 14 || variant == 15) {
      CK(cudaMemcpyToSymbol(dev_nodes, nodes, sizeof nodes));
      CK(cudaGraphUpload(x, st));
    }
    set_scalars(e, resample, verify ? 1 : 0);
    for (int w = 0; w < 50; ++w) CK(cudaGraphLaunch(x, st));
    CK(cudaStreamSynchronize(st));
    set_scalars(e, resample, verify ? 1 : 0);
    const int n_ticks = verify ? 300 : ticks;
    CK(cudaEventRecord(a, st));
    for (int t = 0; t < n_ticks; ++t) CK(cudaGraphLaunch(x, st));
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    scalars back; CK(cudaMemcpy(&back, e.s, sizeof back, cudaMemcpyDeviceToHost));
    printf("n=%zu G=%d variant=%d resample=%d us_per_tick=%.2f ticks=%u marker=%u errors=%u\n", e.n, e.G, variant, resample,
           ms * 1000 / n_ticks, back.tick, back.marker, back.errors);
    CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
  }
  CK(cudaGraphExecDestroy(tail));
}

// If-node body shapes, never taken (resample = 0) unless `taken`.
// shape 0: 5 stages with PDL edges; 1: 5 stages, plain edges; 2: one child-graph node holding the 5
// stages (PDL); 3: one kernel; 4: one kernel that tail-launches the 5-stage device graph.
__global__ void launcher(scalars* s) {
  if (threadIdx.x == 0) {
    cudaError_t e = cudaGraphLaunch(tail_graph, cudaStreamGraphTailLaunch);
    if (e != cudaSuccess) atomicAdd(&s->errors, 1000000u);
  }
}
static void body_shapes(const env& e, cudaStream_t st, cudaStream_t cap, cudaStream_t bodys) {
  const int ticks = 2000;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  cudaGraph_t stages_graph;
  CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
  enqueue_stages(cap, e, true, false, nullptr);
  CK(cudaStreamEndCapture(cap, &stages_graph));
  cudaGraphExec_t tail{};
  CK(cudaGraphInstantiateWithFlags(&tail, stages_graph, cudaGraphInstantiateFlagDeviceLaunch));
  CK(cudaGraphUpload(tail, st));
  CK(cudaMemcpyToSymbol(tail_graph, &tail, sizeof tail));
  CK(cudaStreamSynchronize(st));
  for (int taken = 0; taken < 2; ++taken) {
    for (int shape : {0, 1, 3, 2, 4}) {
      fprintf(stderr, "shape %d taken %d\n", shape, taken);
      cudaGraph_t g; cudaGraphExec_t x;
      CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
      particles<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
      auto h = handle_of(cap);
      launch_pdl(finish_cond, cap, e.sm, e.G, e.s, h);
      cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
      CK(cudaStreamGetCaptureInfo(cap, &cs, nullptr, &gg, &deps, nullptr, &nd));
      cudaGraphNodeParams p{};
      p.type = cudaGraphNodeTypeConditional;
      p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeIf; p.conditional.size = 1;
      cudaGraphNode_t node;
      CK(cudaGraphAddNode(&node, gg, deps, nullptr, nd, &p));
      CK(cudaStreamUpdateCaptureDependencies(cap, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
      cudaGraph_t bg = p.conditional.phGraph_out[0];
      if (shape == 2) {
        cudaGraphNode_t child;
        CK(cudaGraphAddChildGraphNode(&child, bg, nullptr, 0, stages_graph));
      } else {
        CK(cudaStreamBeginCaptureToGraph(bodys, bg, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
        if (shape == 0 || shape == 1) enqueue_stages(bodys, e, shape == 0, false, nullptr);
        if (shape == 3) body<<<1, 32, 0, bodys>>>(e.s);
        if (shape == 4) launcher<<<1, 32, 0, bodys>>>(e.s);
        CK(cudaStreamEndCapture(bodys, &bg));
      }
      CK(cudaStreamEndCapture(cap, &g));
      cudaError_t r = cudaGraphInstantiate(&x, g, 0);
      if (r != cudaSuccess) { printf("shape %d: instantiate failed: %s\n", shape, cudaGetErrorString(r)); cudaGetLastError(); continue; }
      set_scalars(e, taken, 0);
      for (int w = 0; w < 50; ++w) CK(cudaGraphLaunch(x, st));
      CK(cudaStreamSynchronize(st));
      set_scalars(e, taken, 0);
      CK(cudaEventRecord(a, st));
      for (int t = 0; t < ticks; ++t) CK(cudaGraphLaunch(x, st));
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b));
      scalars back; CK(cudaMemcpy(&back, e.s, sizeof back, cudaMemcpyDeviceToHost));
      printf("n=%zu body_shape=%d taken=%d us_per_tick=%.2f ticks=%u marker=%u errors=%u\n", e.n, shape, taken,
             ms * 1000 / ticks, back.tick, back.marker, back.errors);
      CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
    }
  }
  CK(cudaGraphExecDestroy(tail)); CK(cudaGraphDestroy(stages_graph));
}

__global__ void set_cond(scalars* s, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, s->resample ? 1u : 0u); }
__global__ void finish_cond_plain(const float* summaries, int count, scalars* s, cudaGraphConditionalHandle h) {
  const unsigned tick = s->tick;
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += 256) acc += summaries[i];
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[8];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 8; ++i) t += w[i];
    s->total = t;
    s->tick = tick + 1;
    cudaGraphSetConditional(h, s->resample ? 1u : 0u);
  }
}
static void add_if_stages(const env& e, cudaStream_t cap, cudaStream_t bodys, cudaGraphConditionalHandle h) {
  cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
  CK(cudaStreamGetCaptureInfo(cap, &cs, nullptr, &gg, &deps, nullptr, &nd));
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeIf; p.conditional.size = 1;
  cudaGraphNode_t node;
  CK(cudaGraphAddNode(&node, gg, deps, nullptr, nd, &p));
  CK(cudaStreamUpdateCaptureDependencies(cap, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t bg = p.conditional.phGraph_out[0];
  CK(cudaStreamBeginCaptureToGraph(bodys, bg, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  enqueue_stages(bodys, e, true, false, nullptr);
  CK(cudaStreamEndCapture(bodys, &bg));
}
// S0 A,B(pdl),If ; S1 A,B(plain),If ; S2 set_cond,If,A,B(pdl) ; S4 A,B(pdl) ; S5 A,B(pdl),If,C(plain)
static void structures(const env& e, cudaStream_t st, cudaStream_t cap, cudaStream_t bodys) {
  const int ticks = 2000;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int taken = 0; taken < 2; ++taken) {
    for (int sv : {4, 0, 1, 2, 5}) {
      cudaGraph_t g; cudaGraphExec_t x;
      CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
      if (sv == 2) {
        auto h = handle_of(cap);
        set_cond<<<1, 1, 0, cap>>>(e.s, h);
        add_if_stages(e, cap, bodys, h);
        particles<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
        launch_pdl(finish<false, true>, cap, e.sm, e.G, e.s, {});
      } else {
        particles<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
        if (sv == 4) {
          launch_pdl(finish<false, true>, cap, e.sm, e.G, e.s, {});
        } else {
          auto h = handle_of(cap);
          if (sv == 1) finish_cond_plain<<<1, 256, 0, cap>>>(e.sm, e.G, e.s, h);
          else launch_pdl(finish_cond, cap, e.sm, e.G, e.s, h);
          add_if_stages(e, cap, bodys, h);
          if (sv == 5) body<<<1, 32, 0, cap>>>(e.s);
        }
      }
      CK(cudaStreamEndCapture(cap, &g));
      CK(cudaGraphInstantiate(&x, g, 0));
      set_scalars(e, taken, 0);
      for (int w = 0; w < 50; ++w) CK(cudaGraphLaunch(x, st));
      CK(cudaStreamSynchronize(st));
      set_scalars(e, taken, 0);
      CK(cudaEventRecord(a, st));
      for (int t = 0; t < ticks; ++t) CK(cudaGraphLaunch(x, st));
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b));
      printf("n=%zu structure=S%d taken=%d us_per_tick=%.2f\n", e.n, sv, taken, ms * 1000 / ticks);
      CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
    }
  }
}

__global__ void __launch_bounds__(512) particles_gated(const float* x, const float* lw, float* x2, float* lw2, size_t n,
                                                       float* summaries, const scalars* s, int alu) {
  if (s->resample) return;  // this tick's propagation runs in the If body instead
  float acc = 0.f;
  const unsigned tick = s->tick;
  for (size_t i = blockIdx.x * 512ull + threadIdx.x; i < n; i += gridDim.x * 512ull) {
    float a = x[i], b = lw[i];
    float v = a + tick;
    for (int k = 0; k < alu; ++k) v = __fmaf_rn(v, 1.0001f, 0.5f) * 0.999f;
    x2[i] = v;
    lw2[i] = b + v * 1e-6f;
    acc += b;
  }
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(~0u, acc, o);
  __shared__ float w[16];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 16; ++i) t += w[i];
    summaries[blockIdx.x] = t;
  }
}
static std::vector<cudaGraphNode_t> capture_deps(cudaStream_t s) {
  cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
  CK(cudaStreamGetCaptureInfo(s, &cs, nullptr, &gg, &deps, nullptr, &nd));
  return std::vector<cudaGraphNode_t>(deps, deps + nd);
}
static void set_deps(cudaStream_t s, const std::vector<cudaGraphNode_t>& d) {
  CK(cudaStreamUpdateCaptureDependencies(s, const_cast<cudaGraphNode_t*>(d.data()), nullptr, d.size(), cudaStreamSetCaptureDependencies));
}
// S7: K ticks a graph; If_t (stages, then the propagation) beside the next tick's gated propagation.
// S8: K ticks a graph, sequential A, B(pdl), If (the current structure, K per graph).
static void overlapped(const env& e, cudaStream_t st, cudaStream_t cap, cudaStream_t bodys, int K) {
  const int ticks = 2000;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int taken = 0; taken < 2; ++taken) {
    for (int sv : {7, 8}) {
      cudaGraph_t g; cudaGraphExec_t x;
      CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
      if (sv == 8) {
        for (int t = 0; t < K; ++t) {
          particles<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
          auto h = handle_of(cap);
          launch_pdl(finish_cond, cap, e.sm, e.G, e.s, h);
          add_if_stages(e, cap, bodys, h);
        }
      } else {
        particles_gated<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
        for (int t = 0; t < K; ++t) {
          auto h = handle_of(cap);
          finish_cond_plain<<<1, 256, 0, cap>>>(e.sm, e.G, e.s, h);
          const auto after_b = capture_deps(cap);
          // the If node: stages, then the full propagation
          cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
          CK(cudaStreamGetCaptureInfo(cap, &cs, nullptr, &gg, &deps, nullptr, &nd));
          cudaGraphNodeParams p{};
          p.type = cudaGraphNodeTypeConditional;
          p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeIf; p.conditional.size = 1;
          cudaGraphNode_t node;
          CK(cudaGraphAddNode(&node, gg, after_b.data(), nullptr, after_b.size(), &p));
          cudaGraph_t bg = p.conditional.phGraph_out[0];
          CK(cudaStreamBeginCaptureToGraph(bodys, bg, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
          enqueue_stages(bodys, e, true, false, nullptr);
          particles<<<e.G, 512, 0, bodys>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
          CK(cudaStreamEndCapture(bodys, &bg));
          if (t + 1 < K) {
            set_deps(cap, after_b);
            particles_gated<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
            auto d = capture_deps(cap);
            d.push_back(node);
            set_deps(cap, d);
          } else {
            std::vector<cudaGraphNode_t> d{node};
            set_deps(cap, d);
          }
        }
      }
      CK(cudaStreamEndCapture(cap, &g));
      cudaError_t r = cudaGraphInstantiate(&x, g, 0);
      if (r != cudaSuccess) { printf("S%d: instantiate failed: %s\n", sv, cudaGetErrorString(r)); cudaGetLastError(); continue; }
      set_scalars(e, taken, 0);
      for (int w = 0; w < 10; ++w) CK(cudaGraphLaunch(x, st));
      CK(cudaStreamSynchronize(st));
      set_scalars(e, taken, 0);
      CK(cudaEventRecord(a, st));
      for (int t = 0; t < ticks / K; ++t) CK(cudaGraphLaunch(x, st));
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b));
      scalars back; CK(cudaMemcpy(&back, e.s, sizeof back, cudaMemcpyDeviceToHost));
      printf("n=%zu structure=S%d K=%d taken=%d us_per_tick=%.2f ticks=%u\n", e.n, sv, K, taken, ms * 1000 / (ticks / K * K), back.tick);
      CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
    }
  }
}

// S9: K = 2 ticks a graph with no IF node on the path: the graph opens with the previous tick's
// resampler node (set by a one-thread kernel) beside the first tick's gated particle kernel, and
// the second tick's node beside the second gated particle kernel; it ends with a finishing kernel.
static void lead_overlapped(const env& e, cudaStream_t st, cudaStream_t cap, cudaStream_t bodys) {
  const int ticks = 2000, K = 2;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int taken = 0; taken < 2; ++taken) {
    cudaGraph_t g; cudaGraphExec_t x;
    CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
    for (int t = 0; t < K; ++t) {
      auto h = handle_of(cap);
      if (t == 0) {
        set_cond<<<1, 1, 0, cap>>>(e.s, h);
      } else {
        finish_cond_plain<<<1, 256, 0, cap>>>(e.sm, e.G, e.s, h);
      }
      const auto before = capture_deps(cap);
      cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
      CK(cudaStreamGetCaptureInfo(cap, &cs, nullptr, &gg, &deps, nullptr, &nd));
      cudaGraphNodeParams p{};
      p.type = cudaGraphNodeTypeConditional;
      p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeIf; p.conditional.size = 1;
      cudaGraphNode_t node;
      CK(cudaGraphAddNode(&node, gg, before.data(), nullptr, before.size(), &p));
      cudaGraph_t bg = p.conditional.phGraph_out[0];
      CK(cudaStreamBeginCaptureToGraph(bodys, bg, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
      enqueue_stages(bodys, e, true, false, nullptr);
      particles<<<e.G, 512, 0, bodys>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
      CK(cudaStreamEndCapture(bodys, &bg));
      // the gated particle kernel beside: after the previous finish (t > 0), or first in the graph
      if (t == 0) {
        std::vector<cudaGraphNode_t> none;
        set_deps(cap, none);
      } else {
        set_deps(cap, before);
      }
      particles_gated<<<e.G, 512, 0, cap>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
      auto d = capture_deps(cap);
      d.push_back(node);
      set_deps(cap, d);
    }
    finish<false, false><<<1, 256, 0, cap>>>(e.sm, e.G, e.s, {});
    CK(cudaStreamEndCapture(cap, &g));
    cudaError_t r = cudaGraphInstantiate(&x, g, 0);
    if (r != cudaSuccess) { printf("S9: instantiate failed: %s\n", cudaGetErrorString(r)); cudaGetLastError(); continue; }
    set_scalars(e, taken, 0);
    for (int w = 0; w < 10; ++w) CK(cudaGraphLaunch(x, st));
    CK(cudaStreamSynchronize(st));
    set_scalars(e, taken, 0);
    CK(cudaEventRecord(a, st));
    for (int t = 0; t < ticks / K; ++t) CK(cudaGraphLaunch(x, st));
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    printf("n=%zu structure=S9 K=%d taken=%d us_per_tick=%.2f\n", e.n, K, taken, ms * 1000 / ticks);
    CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int ticks = 2000;
  cudaStream_t st, cap, bodys;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&bodys, cudaStreamNonBlocking));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (size_t n : {size_t(1) << 10, size_t(1) << 18, size_t(1) << 24}) {
    env e{};
    e.n = n; e.G = n <= 4096 ? 1 : (int)std::min<size_t>(n / 4096, sms * 3); e.alu = 24;
    CK(cudaMalloc(&e.x, n * 4)); CK(cudaMalloc(&e.lw, n * 4)); CK(cudaMalloc(&e.x2, n * 4)); CK(cudaMalloc(&e.lw2, n * 4));
    CK(cudaMemset(e.x, 0, n * 4)); CK(cudaMemset(e.lw, 0, n * 4));
    CK(cudaMalloc(&e.sm, 4096 * 4)); CK(cudaMalloc(&e.sink, 8192 * 4)); CK(cudaMalloc(&e.s, sizeof(scalars)));
    CK(cudaMemset(e.s, 0, sizeof(scalars)));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    if (argc > 5) {
      for (int r = 0; r < 2; ++r) { overlapped(e, st, cap, bodys, 2); lead_overlapped(e, st, cap, bodys); structures(e, st, cap, bodys); }
      continue;
    }
    if (argc > 4) { for (int K : {2, 8}) { overlapped(e, st, cap, bodys, K); overlapped(e, st, cap, bodys, K); } continue; }
    if (argc > 3) { structures(e, st, cap, bodys); structures(e, st, cap, bodys); continue; }
    if (argc > 2) { body_shapes(e, st, cap, bodys); body_shapes(e, st, cap, bodys); continue; }
    new_variants(e, st, cap, bodys);
    new_variants(e, st, cap, bodys);
    if (argc > 1) continue;
    // Plain kernel A alone (stream launches), for reference.
    for (int rep = 0; rep < 2; ++rep) {
      for (int variant = 0; variant < 4; ++variant) {
        for (int per_graph : {1, 8}) {
          cudaGraph_t g; cudaGraphExec_t x;
          CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
          for (int k = 0; k < per_graph; ++k) tick_body(e, variant, cap, bodys);
          CK(cudaStreamEndCapture(cap, &g));
          CK(cudaGraphInstantiate(&x, g, 0));
          for (int w = 0; w < 50; ++w) CK(cudaGraphLaunch(x, st));
          CK(cudaEventRecord(a, st));
          for (int t = 0; t < ticks / per_graph; ++t) CK(cudaGraphLaunch(x, st));
          CK(cudaEventRecord(b, st));
          CK(cudaEventSynchronize(b));
          float ms; CK(cudaEventElapsedTime(&ms, a, b));
          printf("n=%zu G=%d variant=%d per_graph=%d us_per_tick=%.2f\n", n, e.G, variant, per_graph, ms * 1000 / ticks);
          CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
        }
      }
      // While loop: one graph, body = A, B(pdl, sets both), If.
      {
        cudaGraph_t g; cudaGraphExec_t x;
        CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
        auto hw = handle_of(cap, 1, cudaGraphCondAssignDefault);
        cudaStreamCaptureStatus cs; cudaGraph_t gg; const cudaGraphNode_t* deps; size_t nd;
        CK(cudaStreamGetCaptureInfo(cap, &cs, nullptr, &gg, &deps, nullptr, &nd));
        cudaGraphNodeParams p{};
        p.type = cudaGraphNodeTypeConditional;
        p.conditional.handle = hw; p.conditional.type = cudaGraphCondTypeWhile; p.conditional.size = 1;
        cudaGraphNode_t node;
        CK(cudaGraphAddNode(&node, gg, deps, nullptr, nd, &p));
        CK(cudaStreamUpdateCaptureDependencies(cap, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
        cudaGraph_t wb = p.conditional.phGraph_out[0];
        CK(cudaStreamBeginCaptureToGraph(bodys, wb, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
        cudaStream_t b2; CK(cudaStreamCreateWithFlags(&b2, cudaStreamNonBlocking));
        particles<<<e.G, 512, 0, bodys>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
        cudaStreamCaptureStatus cs2; cudaGraph_t g2;
        CK(cudaStreamGetCaptureInfo(bodys, &cs2, nullptr, &g2));
        cudaGraphConditionalHandle hi; CK(cudaGraphConditionalHandleCreate(&hi, g2, 0, 0));
        {
          cudaLaunchAttribute at{};
          at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
          at.val.programmaticStreamSerializationAllowed = 1;
          cudaLaunchConfig_t c{};
          c.gridDim = 1; c.blockDim = 256; c.stream = bodys; c.attrs = &at; c.numAttrs = 1;
          CK(cudaLaunchKernelEx(&c, finish_loop, (const float*)e.sm, e.G, e.s, hi, hw));
        }
        add_if(bodys, b2, hi, e.s);
        CK(cudaStreamEndCapture(bodys, &wb));
        CK(cudaStreamEndCapture(cap, &g));
        CK(cudaGraphInstantiate(&x, g, 0));
        scalars init{0, 0, 0.f, 50};
        CK(cudaMemcpy(e.s, &init, sizeof init, cudaMemcpyHostToDevice));
        CK(cudaGraphLaunch(x, st));
        CK(cudaStreamSynchronize(st));
        init.limit = ticks;
        CK(cudaMemcpy(e.s, &init, sizeof init, cudaMemcpyHostToDevice));
        CK(cudaEventRecord(a, st));
        CK(cudaGraphLaunch(x, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        scalars back; CK(cudaMemcpy(&back, e.s, sizeof back, cudaMemcpyDeviceToHost));
        printf("n=%zu G=%d variant=while ticks_done=%u us_per_tick=%.2f\n", n, e.G, back.tick, ms * 1000 / back.tick);
        CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
      }
      // The particle kernel alone, stream launches back to back.
      CK(cudaEventRecord(a, st));
      for (int t = 0; t < ticks; ++t) particles<<<e.G, 512, 0, st>>>(e.x, e.lw, e.x2, e.lw2, e.n, e.sm, e.s, e.alu);
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms; CK(cudaEventElapsedTime(&ms, a, b));
      printf("n=%zu G=%d A_alone_stream us=%.2f\n", n, e.G, ms * 1000 / ticks);
    }
    CK(cudaFree(e.x)); CK(cudaFree(e.lw)); CK(cudaFree(e.x2)); CK(cudaFree(e.lw2)); CK(cudaFree(e.sm));
    CK(cudaFree(e.sink)); CK(cudaFree(e.s));
  }
  return 0;
}
