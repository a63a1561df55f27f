// A minimal lazy coroutine type for simulated actors. A protocol is written as
// straight-line consumer code (`co_await w.Ack(e)`); every leaf co_await hands
// one request to the scheduler and suspends the whole chain until the
// scheduler has executed it. Destroying the outermost Task destroys every
// frame below it: that is how a worker crash kills a worker mid-step.
//
// Tasks start suspended; awaiting one starts it (symmetric transfer) and its
// completion resumes the awaiter. Exceptions are not part of the model: an
// exception escaping a task is a harness bug and terminates.
//
// GCC 12 miscompiles a co_await inside an if/switch/while condition when the
// awaiter has a non-trivial destructor (the coroutine silently ends): bind
// the result to a local first (`bool ran = co_await w.Effect(e); if (!ran)`).
// tests/sim/coroutine_style_test.cc fails the build if such a line appears.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace xackly {

namespace task_detail {

struct FinalAwaiter {
  bool await_ready() const noexcept { return false; }
  template <typename Promise>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> h) const noexcept {
    std::coroutine_handle<> next = h.promise().continuation;
    return next ? next : std::noop_coroutine();
  }
  void await_resume() const noexcept {}
};

struct PromiseBase {
  std::coroutine_handle<> continuation;
  std::suspend_always initial_suspend() const noexcept { return {}; }
  FinalAwaiter final_suspend() const noexcept { return {}; }
  void unhandled_exception() const noexcept { std::terminate(); }
};

// Owns a coroutine handle: move-only, destroys the frame (and so every frame
// it is awaiting) when it goes away.
template <typename Promise>
class TaskHandle {
 public:
  TaskHandle() = default;
  explicit TaskHandle(std::coroutine_handle<Promise> h) : handle_(h) {}
  TaskHandle(TaskHandle&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  TaskHandle& operator=(TaskHandle&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  TaskHandle(const TaskHandle&) = delete;
  TaskHandle& operator=(const TaskHandle&) = delete;
  ~TaskHandle() {
    if (handle_) handle_.destroy();
  }
  std::coroutine_handle<Promise> get() const { return handle_; }

 private:
  std::coroutine_handle<Promise> handle_;
};

// Awaiting a task starts it and resumes the awaiter when it finishes.
template <typename Promise, typename Result>
struct TaskAwaiter {
  std::coroutine_handle<Promise> h;
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h.promise().continuation = awaiting;
    return h;
  }
  Result await_resume() {
    if constexpr (!std::is_void_v<Result>) return std::move(*h.promise().value);
  }
};

}  // namespace task_detail

template <typename T = void>
class [[nodiscard]] Task {
 public:
  struct promise_type : task_detail::PromiseBase {
    std::optional<T> value;
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    void return_value(T v) { value.emplace(std::move(v)); }
  };

  auto operator co_await() && noexcept {
    return task_detail::TaskAwaiter<promise_type, T>{handle_.get()};
  }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
  task_detail::TaskHandle<promise_type> handle_;
};

template <>
class [[nodiscard]] Task<void> {
 public:
  struct promise_type : task_detail::PromiseBase {
    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    void return_void() const noexcept {}
  };

  Task() = default;

  auto operator co_await() && noexcept {
    return task_detail::TaskAwaiter<promise_type, void>{handle_.get()};
  }

  // For the scheduler, which owns top-level tasks.
  bool valid() const { return static_cast<bool>(handle_.get()); }
  // Runs the task until its first suspension. REQUIRES: valid(), not started.
  void Start() { handle_.get().resume(); }
  bool done() const { return handle_.get() && handle_.get().done(); }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
  task_detail::TaskHandle<promise_type> handle_;
};

}  // namespace xackly
