#include "base/thread_pool.hpp"

#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace epsjoin::detail {

namespace {

// One run_on_workers call, shared with the workers that pick its tasks up: a task starts only
// while the call is open, and the call waits for the started ones before it returns.
struct call_state {
  const std::function<void(unsigned)>* task = nullptr;
  std::mutex mutex;
  std::condition_variable finished;
  unsigned running = 0;
  bool closed = false;
};

struct queued_task {
  std::shared_ptr<call_state> call;
  unsigned worker = 0;
};

thread_local bool on_worker_thread = false;

class worker_pool {
 public:
  /// The process's pool; a forked child (whose parent's workers did not follow it) gets a new one.
  static worker_pool& instance() {
    static std::mutex guard;
    static worker_pool* pool = nullptr;
    std::lock_guard lock(guard);
    if (pool == nullptr || pool->pid_ != ::getpid()) {
      // Never destroyed: its threads wait on it until the process ends, and a static's destructor
      // would run while they do.
      pool = new worker_pool();
    }
    return *pool;
  }

  void post(const std::shared_ptr<call_state>& call, unsigned tasks) {
    bool wake_all = false;
    {
      std::lock_guard lock(mutex_);
      for (unsigned w = 1; w <= tasks; ++w) queue_.push_back({call, w});
      // Every queued task gets a worker that is idle or starting: calls made at once (one join a
      // GPU of a multi-device join) must not share one call's worth of workers between them.
      while (idle_ + starting_ < queue_.size()) {
        std::thread([this] { serve(); }).detach();
        ++threads_;
        ++starting_;
      }
      wake_all = tasks >= threads_;
    }
    if (wake_all) {
      ready_.notify_all();
    } else {
      for (unsigned k = 0; k < tasks; ++k) ready_.notify_one();
    }
  }

 private:
  worker_pool() : pid_(::getpid()) {}

  void serve() {
    on_worker_thread = true;
    bool started = false;
    for (;;) {
      queued_task next;
      {
        std::unique_lock lock(mutex_);
        if (!started) {
          --starting_;
          started = true;
        }
        ++idle_;
        ready_.wait(lock, [&] { return !queue_.empty(); });
        --idle_;
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      call_state& call = *next.call;
      {
        std::lock_guard lock(call.mutex);
        if (call.closed) continue;
        ++call.running;
      }
      (*call.task)(next.worker);
      {
        std::lock_guard lock(call.mutex);
        --call.running;
      }
      call.finished.notify_all();
    }
  }

  pid_t pid_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<queued_task> queue_;
  unsigned threads_ = 0;
  std::size_t idle_ = 0;      // workers waiting for a task
  std::size_t starting_ = 0;  // workers started that have not yet waited
};

}  // namespace

void run_on_workers(unsigned workers, const std::function<void(unsigned)>& task) {
  if (workers <= 1) {
    task(0);
    return;
  }
  if (on_worker_thread) {
    std::vector<std::thread> own;
    own.reserve(workers - 1);
    for (unsigned w = 1; w < workers; ++w) own.emplace_back(task, w);
    task(0);
    for (std::thread& t : own) t.join();
    return;
  }
  auto call = std::make_shared<call_state>();
  call->task = &task;
  worker_pool::instance().post(call, workers - 1);
  task(0);
  std::unique_lock lock(call->mutex);
  call->closed = true;
  call->finished.wait(lock, [&] { return call->running == 0; });
}

}  // namespace epsjoin::detail
