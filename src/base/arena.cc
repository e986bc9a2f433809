#include "base/arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "base/check.h"

namespace k3::base {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMinBlock = size_t{64} << 10;
constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

class HostAllocator final : public BlockAllocator {
 public:
  void* AllocateBlock(size_t bytes) override {
    const size_t alignment = bytes >= kHugePage ? kHugePage : kAlign;
    const size_t rounded = RoundUp(std::max<size_t>(bytes, 1), alignment);
    void* block = std::aligned_alloc(alignment, rounded);
    K3_CHECK(block != nullptr) << "out of memory allocating " << bytes << " bytes";
    if (alignment == kHugePage) madvise(block, rounded, MADV_HUGEPAGE);  // a hint only
    return block;
  }
  void FreeBlock(void* block, size_t) override { std::free(block); }
};

}  // namespace

BlockAllocator& HostBlockAllocator() {
  static HostAllocator allocator;
  return allocator;
}

Arena::Arena(BlockAllocator* allocator)
    : allocator_(allocator != nullptr ? allocator : &HostBlockAllocator()) {}

Arena::~Arena() { FreeAll(); }

Arena::Arena(Arena&& other) noexcept
    : allocator_(other.allocator_),
      blocks_(std::move(other.blocks_)),
      current_(std::exchange(other.current_, 0)),
      offset_(std::exchange(other.offset_, 0)),
      used_(std::exchange(other.used_, 0)),
      peak_(std::exchange(other.peak_, 0)),
      blocks_allocated_(other.blocks_allocated_) {
  other.blocks_.clear();
}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    FreeAll();
    allocator_ = other.allocator_;
    blocks_ = std::move(other.blocks_);
    other.blocks_.clear();
    current_ = std::exchange(other.current_, 0);
    offset_ = std::exchange(other.offset_, 0);
    used_ = std::exchange(other.used_, 0);
    peak_ = std::exchange(other.peak_, 0);
    blocks_allocated_ = other.blocks_allocated_;
  }
  return *this;
}

void Arena::FreeAll() {
  for (const Block& block : blocks_) allocator_->FreeBlock(block.data, block.size);
  blocks_.clear();
  current_ = offset_ = 0;
}

size_t Arena::capacity_bytes() const {
  size_t total = 0;
  for (const Block& block : blocks_) total += block.size;
  return total;
}

void* Arena::AllocateBytes(size_t bytes) {
  const size_t rounded = RoundUp(std::max<size_t>(bytes, 1), kAlign);
  used_ += rounded;
  peak_ = std::max(peak_, used_);
  if (!blocks_.empty() && offset_ + rounded <= blocks_[current_].size) {
    void* p = blocks_[current_].data + offset_;
    offset_ += rounded;
    return p;
  }
  // A later block kept from before (after an ArenaMark rewound past it), else a new one.
  for (size_t next = blocks_.empty() ? 0 : current_ + 1; next < blocks_.size(); ++next) {
    if (blocks_[next].size >= rounded) {
      current_ = next;
      offset_ = rounded;
      return blocks_[next].data;
    }
  }
  const size_t last = blocks_.empty() ? 0 : blocks_.back().size;
  const size_t size = std::max({rounded, 2 * last, kMinBlock});
  Block block{static_cast<char*>(allocator_->AllocateBlock(size)), size};
  ++blocks_allocated_;
  blocks_.push_back(block);
  current_ = blocks_.size() - 1;
  offset_ = rounded;
  return block.data;
}

void Arena::Reset(size_t min_capacity) {
  const size_t wanted = std::max(peak_, min_capacity);
  if (blocks_.size() > 1 || (wanted > 0 && capacity_bytes() < wanted)) {
    // Headroom, so steps that grow slowly (decode: attention scratch grows with the context)
    // fold again only every 1/8 of growth.
    const size_t size = RoundUp(wanted + wanted / 8 + kMinBlock, kAlign);
    FreeAll();
    blocks_.push_back({static_cast<char*>(allocator_->AllocateBlock(size)), size});
    ++blocks_allocated_;
  }
  current_ = offset_ = used_ = peak_ = 0;
}

}  // namespace k3::base
