// Arena: a bump allocator for per-step scratch. Allocations are 64-byte aligned and uninitialised
// and live until Reset() (or until an ArenaMark taken before them is released). Memory comes in
// blocks from a BlockAllocator (host memory by default; a device backend passes its own) and is
// kept: Reset() folds the blocks of a step into one block larger than that step's peak (by 1/8
// plus 64 KiB), so from the second step of the same shape on, no allocation reaches the
// BlockAllocator, and steps that grow slowly (decode over a growing context) rarely do.
// Not thread-safe: one arena per thread (see kernels::Workspace for per-worker arenas).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace k3::base {

// Where an arena's blocks come from. Implementations must be thread-safe.
class BlockAllocator {
 public:
  virtual ~BlockAllocator() = default;
  // At least `bytes` bytes, 64-byte aligned, uninitialised.
  virtual void* AllocateBlock(size_t bytes) = 0;
  virtual void FreeBlock(void* block, size_t bytes) = 0;
};

// Host memory (aligned_alloc; blocks of 2 MiB or more are advised to use transparent huge pages).
BlockAllocator& HostBlockAllocator();

class Arena {
 public:
  explicit Arena(BlockAllocator* allocator = nullptr);  // nullptr: HostBlockAllocator()
  ~Arena();
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // `count` uninitialised objects of trivially destructible type T, 64-byte aligned.
  template <typename T>
  T* Allocate(size_t count) {
    return static_cast<T*>(AllocateBytes(count * sizeof(T)));
  }
  void* AllocateBytes(size_t bytes);

  // Frees every allocation. Keeps one block of at least max(peak bytes since the last Reset,
  // min_capacity) (with headroom when it has to fold or grow), so the same pattern of
  // allocations next time needs no new block.
  void Reset(size_t min_capacity = 0);

  // Bytes handed out since the last Reset, at most (rounded to 64), and now.
  size_t peak_bytes() const { return peak_; }
  size_t used_bytes() const { return used_; }
  size_t capacity_bytes() const;
  // Blocks obtained from the BlockAllocator over the arena's life (a warm arena stops counting).
  int64_t blocks_allocated() const { return blocks_allocated_; }

 private:
  friend class ArenaMark;
  struct Block {
    char* data = nullptr;
    size_t size = 0;
  };
  void FreeAll();

  BlockAllocator* allocator_;
  std::vector<Block> blocks_;
  size_t current_ = 0;  // block being filled
  size_t offset_ = 0;   // bytes used in blocks_[current_]
  size_t used_ = 0;     // rounded bytes live since Reset (over all blocks)
  size_t peak_ = 0;
  int64_t blocks_allocated_ = 0;
};

// Releases, when destroyed, everything allocated from `arena` after its construction: scoped
// scratch inside one step (per task, per sequence).
class ArenaMark {
 public:
  explicit ArenaMark(Arena& arena)
      : arena_(arena), current_(arena.current_), offset_(arena.offset_), used_(arena.used_) {}
  ~ArenaMark() {
    arena_.current_ = current_;
    arena_.offset_ = offset_;
    arena_.used_ = used_;
  }
  ArenaMark(const ArenaMark&) = delete;
  ArenaMark& operator=(const ArenaMark&) = delete;

 private:
  Arena& arena_;
  size_t current_, offset_, used_;
};

}  // namespace k3::base
