#ifndef MROPE_POSITIONS_POSITION_BUFFER_H_
#define MROPE_POSITIONS_POSITION_BUFFER_H_

// PositionBuffer<T>: the vector that position outputs (PositionResult::position_ids,
// PackedPositions::positions) are returned in. It is a std::vector<T> in every respect except
// that resize(n) and PositionBuffer<T>(n) leave new arithmetic elements uninitialised instead of
// zeroing them: the writers size the buffer, then write every entry once, so the zero-fill of a
// std::vector would be a second full pass over the output. Copy it into a std::vector with
// std::vector<T>(buffer.begin(), buffer.end()) where one is needed.

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace mrope {

// A std::allocator whose construct() with no arguments default-initialises (for int and float:
// leaves the value as it is) rather than value-initialises. Every other operation is
// std::allocator's.
template <typename T>
class DefaultInitAllocator : public std::allocator<T> {
 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };

  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>& /*other*/) noexcept {}

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <typename T>
using PositionBuffer = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace mrope

#endif  // MROPE_POSITIONS_POSITION_BUFFER_H_
