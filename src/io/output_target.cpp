#include "io/output_target.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/io_file.hpp"
#include "io/unfinished.hpp"

namespace epsjoin::detail {

namespace {

// Linux's own limit on a path's links (ELOOP), so the walk gives up where open() would.
constexpr int max_link_hops = 40;

bool same_node(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool is_stdout_node(const struct stat& node) {
  struct stat out {};
  return ::fstat(STDOUT_FILENO, &out) == 0 && same_node(node, out);
}

// Where the link `at` points, a relative target taken from the link's own folder.
std::string follow_link(const std::string& path, const std::string& at) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlink(at.c_str(), target.data(), target.size());
  if (n < 0 || static_cast<std::size_t>(n) == target.size()) {
    io_fail(path, "cannot read the symbolic link ", at, ": ",
            std::strerror(n < 0 ? errno : ENAMETOOLONG));
  }
  target.resize(static_cast<std::size_t>(n));
  if (target.front() == '/') return target;
  const std::size_t slash = at.rfind('/');
  return slash == std::string::npos ? target : at.substr(0, slash + 1) + target;
}

// The folder of a file target must take the temporary file: tried now, before any work.
void probe_beside(const std::string& path, const std::string& destination) {
  const std::string probe = unfinished_name(destination);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    if (destination == path) io_fail(path, "cannot open for writing: ", std::strerror(err));
    io_fail(path, "cannot write beside ", destination, " (where the link points): ",
            std::strerror(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

const char* description(output_node node) {
  switch (node) {
    case output_node::new_file: return "a new file";
    case output_node::regular_file: return "a regular file";
    case output_node::standard_output: return "standard output";
    case output_node::character_device: return "a character device";
    case output_node::fifo: return "a FIFO";
    case output_node::socket: return "a socket";
  }
  return "an output";
}

output_target target_of(output_target t, std::string destination, output_node node) {
  t.destination = std::move(destination);
  t.node = node;
  t.kind = node == output_node::new_file || node == output_node::regular_file ? output_kind::file
                                                                              : output_kind::stream;
  t.standard_output = node == output_node::standard_output;
  t.what = description(node);
  return t;
}

// An existing node that is not a link (or what a link leads to, `at` being the link).
output_target existing_target(output_target t, const std::string& at, const struct stat& node) {
  if (is_stdout_node(node)) return target_of(std::move(t), "-", output_node::standard_output);
  if (S_ISCHR(node.st_mode) || S_ISFIFO(node.st_mode)) {
    if (::access(at.c_str(), W_OK) != 0) {
      io_fail(t.path, "cannot write to ", S_ISCHR(node.st_mode) ? "a character device" : "a FIFO",
              ": ", std::strerror(errno));
    }
    return target_of(std::move(t), at,
                     S_ISCHR(node.st_mode) ? output_node::character_device : output_node::fifo);
  }
  if (S_ISSOCK(node.st_mode)) {
    if (at.size() >= sizeof(sockaddr_un{}.sun_path)) {
      io_fail(t.path, "a socket path must be shorter than ", sizeof(sockaddr_un{}.sun_path),
              " bytes to be connected to");
    }
    return target_of(std::move(t), at, output_node::socket);
  }
  if (S_ISREG(node.st_mode)) return target_of(std::move(t), at, output_node::regular_file);
  if (S_ISDIR(node.st_mode)) {
    io_fail(t.path, "is a directory", at == t.path ? "" : " (where the link points)",
            "; name a file for the output");
  }
  if (S_ISBLK(node.st_mode)) {
    io_fail(t.path, "is a block device; results are not written over a disk: name a file");
  }
  io_fail(t.path, "is neither a file, a character device, a FIFO nor a socket");
}

}  // namespace

output_target classify_output(const std::string& path) {
  output_target t;
  t.path = path;
  if (path.empty()) io_fail("''", "an output needs a file name ('-' for standard output)");
  if (path == "-") return target_of(std::move(t), "-", output_node::standard_output);
  std::string at = path;
  for (int hops = 0;; ++hops) {
    struct stat node {};
    if (::lstat(at.c_str(), &node) != 0) {
      if (errno != ENOENT) io_fail(path, "cannot inspect ", at, ": ", std::strerror(errno));
      return target_of(std::move(t), at, output_node::new_file);
    }
    if (!S_ISLNK(node.st_mode)) return existing_target(std::move(t), at, node);
    // A device, FIFO or socket behind a link is opened through the link itself: /proc's links
    // (/dev/stdout -> /proc/self/fd/1 -> pipe:[...]) name no path that could be followed.
    struct stat behind {};
    if (::stat(at.c_str(), &behind) == 0 && !S_ISREG(behind.st_mode) && !S_ISDIR(behind.st_mode)) {
      return existing_target(std::move(t), at, behind);
    }
    if (hops == max_link_hops) io_fail(path, "too many levels of symbolic links");
    at = follow_link(path, at);
  }
}

output_target resolve_output(const std::string& path) {
  output_target target = classify_output(path);
  if (target.kind == output_kind::file) probe_beside(target.path, target.destination);
  return target;
}

int open_stream(const output_target& target) {
  if (target.destination == "-") {
    const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) io_fail(target.path, "standard output is not open: ", std::strerror(errno));
    return fd;
  }
  if (target.node == output_node::socket) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) io_fail(target.path, "cannot make a socket: ", std::strerror(errno));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, target.destination.c_str(), sizeof address.sun_path - 1);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      const int err = errno;
      ::close(fd);
      io_fail(target.path, "cannot connect to the socket: ", std::strerror(err));
    }
    return fd;
  }
  // No O_CREAT and no O_TRUNC: the node is written as it is, never replaced.
  const int fd = ::open(target.destination.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) io_fail(target.path, "cannot open ", target.what, " for writing: ", std::strerror(errno));
  return fd;
}

int open_temporary(const output_target& target, const std::string& temporary, int access) {
  const int fd = ::open(temporary.c_str(), access | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) io_fail(target.path, "cannot open for writing: ", std::strerror(errno));
  // The file replaced keeps its permissions: a private result must not become readable by all.
  struct stat replaced {};
  if (::stat(target.destination.c_str(), &replaced) == 0 && S_ISREG(replaced.st_mode)) {
    (void)::fchmod(fd, replaced.st_mode & 07777);
  }
  return fd;
}

}  // namespace epsjoin::detail
