// Probe (nvcc on the GPU machine; not part of the build): does cp.async (LDGSTS) cost more when a
// warp's 16-byte pieces land in shared memory in another order than the lanes read them, although
// every 8 lanes still read one contiguous 128-byte line and write one 128-byte shared line?
// This is the question behind the slow tn matmul (notes/tensor-cores.md): wgmma's A row
// permutation sends lane l's 8 M-rows of an M-major A to chunk rot(l % 8) of its line, where rot
// rotates the 3 chunk bits left by one (c2 c1 c0 -> c1 c0 c2), as lower_wgmma.cpp's wgmma_row does
// for 4 warps.
//   nvcc -O3 -arch=sm_90a -o /tmp/ldgsts_order tests/gpu/probes/ldgsts_order.cu && /tmp/ldgsts_order
// Prints GB/s per variant: 0 lane order on both sides, no swizzle; 1 the shared side rotated and
// swizzled (A today); 2 the global side rotated, the shared side swizzled only (a cure that keeps
// the accumulator layout); 3 the shared side swizzled only (B today).
#include <cstdio>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 128, kStages = 4, kStageBytes = kThreads * 16 * 4;  // 4 pieces per thread per stage

__device__ int rot3(int c) { return ((c << 1) & 6) | (c >> 2); }

__device__ void copy16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

template <int Variant>
__global__ void probe(const char* __restrict__ in, long long bytes_per_block, int iters, int* sink) {
  extern __shared__ __align__(128) char ring[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(ring));
  const char* block_in = in + blockIdx.x * bytes_per_block;
  long long off = 0;
  for (int it = 0; it < iters; ++it) {
    const int stage = it % kStages;
    for (int piece = 0; piece < 4; ++piece) {
      // 8 lanes per 128-byte line; a warp covers 4 lines; 4 warps x 4 pieces = 64 lines per stage.
      const int line = (warp * 4 + piece) * 4 + lane / 8;
      const int c = lane % 8;
      int src_chunk = c, dst_chunk = c;
      if (Variant == 1) dst_chunk = rot3(c) ^ (line % 8);  // A today: rotated, and swizzled
      if (Variant == 2) {                                  // the same pieces, read by other lanes
        src_chunk = rot3(c);
        dst_chunk = c ^ (line % 8);
      }
      if (Variant == 3) dst_chunk = c ^ (line % 8);        // B today: swizzled only
      const char* src = block_in + (off + static_cast<long long>(line) * 128 + src_chunk * 16) % bytes_per_block;
      copy16(base + stage * kStageBytes + line * 128 + dst_chunk * 16, src);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 2;\n" ::);
    __syncthreads();
    off += kStageBytes;
  }
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  if (tid == 0 && ring[5] == 123 && ring[77] == 45) atomicAdd(sink, 1);  // keep the copies alive
}

template <int Variant>
float run(const char* in, long long bytes_per_block, int blocks, int iters, int* sink) {
  const int smem = kStages * kStageBytes;
  cudaFuncSetAttribute(probe<Variant>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  probe<Variant><<<blocks, kThreads, smem>>>(in, bytes_per_block, iters, sink);  // warm-up
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    probe<Variant><<<blocks, kThreads, smem>>>(in, bytes_per_block, iters, sink);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  return best;
}

}  // namespace

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int blocks = sms * 2, iters = 2000;
  int* sink;
  cudaMalloc(&sink, sizeof(int));
  for (long long per_block : {64LL << 10, 4LL << 20}) {  // 64 KB per block: from L2; 4 MB: from DRAM
    char* in;
    cudaMalloc(&in, per_block * blocks);
    cudaMemset(in, 1, per_block * blocks);
    const double moved = static_cast<double>(kStageBytes) * iters * blocks;
    const float t[4] = {run<0>(in, per_block, blocks, iters, sink), run<1>(in, per_block, blocks, iters, sink),
                        run<2>(in, per_block, blocks, iters, sink), run<3>(in, per_block, blocks, iters, sink)};
    std::printf("ldgsts probe, %lld KB per block (%s), %d blocks: GB/s  lane-order %.0f | shared rotated+swizzled %.0f | "
                "global rotated %.0f | swizzled only %.0f\n",
                per_block >> 10, per_block <= (64LL << 10) ? "L2" : "DRAM", blocks, moved / t[0] / 1e6,
                moved / t[1] / 1e6, moved / t[2] / 1e6, moved / t[3] / 1e6);
    cudaFree(in);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return std::printf("CUDA error %s\n", cudaGetErrorString(e)), 1;
  return 0;
}
