// Outputs by kind: a new name or a regular file is written beside itself and renamed; standard
// output, a device, a FIFO or a socket is written in place and never replaced; a symlink is
// followed to its file and survives; a directory is refused. Everything happens in a private
// folder: the real /dev/null is never touched.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "epsjoin/io.hpp"
#include "epsjoin/sink.hpp"
#include "unit/io_test_util.hpp"
#include "results/handover.hpp"

namespace {

namespace fs = std::filesystem;
using epsjoin::output_kind;

/// A folder of the test's own, removed with everything in it at the end.
class private_folder {
 public:
  private_folder() {
    std::string pattern = (fs::temp_directory_path() / "epsjoin-outputs-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    path_ = pattern;
  }
  ~private_folder() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(path_)) {
      found.push_back(entry.path().filename().string());
    }
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  fs::path path_;
};

/// Reads everything written into a FIFO by another thread of this process.
class fifo_reader {
 public:
  explicit fifo_reader(const std::string& path) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
    thread_ = std::thread([this, path] {
      const int fd = ::open(path.c_str(), O_RDONLY);
      char buf[65536];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got_.append(buf, static_cast<std::size_t>(n));
      ::close(fd);
    });
  }
  std::string take() {
    thread_.join();
    return got_;
  }

 private:
  std::thread thread_;
  std::string got_;
};

// The table every CSR writer below writes: rows {1, 4}, {}, {0}, {0, 1, 2}, {}.
const std::vector<std::uint32_t> counts = {2, 0, 1, 3, 0};
const std::vector<std::uint64_t> offsets = {0, 2, 2, 3, 6, 6};
const std::vector<std::uint32_t> ids = {4, 1, 0, 2, 0, 1};

void write_by_rows(const std::string& path) {
  epsjoin::csr_file_sink sink(path, true);
  sink.begin({5, 5, true, false});
  const epsjoin::row_destination dest = epsjoin::detail::lay_out_rows(sink, counts);
  std::copy(ids.begin(), ids.end(), dest.neighbors);
  sink.finish();
}

void write_by_blocks(const std::string& path) {
  epsjoin::csr_file_sink sink(path, true);
  sink.begin({5, 5, true, false});
  epsjoin::detail::begin_row_blocks(sink, counts);
  epsjoin::detail::hand_row_block(sink, 0, {offsets.data(), 3}, {ids.data(), 2});
  epsjoin::detail::hand_row_block(sink, 2, {offsets.data() + 2, 4}, {ids.data() + 2, 4});
  sink.finish();
}

TEST(output_target, classifies_files_and_streams) {
  private_folder dir;
  epsjoin::test::write_bytes(dir / "old", "x");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_directory(dir / "sub");

  const epsjoin::output_target fresh = epsjoin::check_output_path(dir / "new.csr");
  EXPECT_EQ(fresh.kind, output_kind::file);
  EXPECT_EQ(fresh.destination, dir / "new.csr");
  EXPECT_EQ(epsjoin::check_output_path(dir / "old").kind, output_kind::file);
  EXPECT_EQ(epsjoin::check_output_path(dir / "fifo").kind, output_kind::stream);
  const epsjoin::output_target out = epsjoin::check_output_path("-");
  EXPECT_EQ(out.kind, output_kind::stream);
  EXPECT_TRUE(out.standard_output);
  epsjoin::test::expect_io_error([&] { epsjoin::check_output_path(dir / "sub"); },
                                 {"sub", "is a directory"});
  EXPECT_THROW(epsjoin::check_output_path(""), epsjoin::io_error);
  // The probe leaves nothing behind.
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"fifo", "old", "sub"}));
}

TEST(output_target, follows_symlinks_to_their_file) {
  private_folder dir;
  epsjoin::test::write_bytes(dir / "target.csr", "old");
  fs::create_symlink("target.csr", dir / "relative");  // relative to the link's folder
  fs::create_symlink(dir / "relative", dir / "chain");
  fs::create_symlink("missing.csr", dir / "dangling");
  fs::create_symlink("loop-b", dir / "loop-a");
  fs::create_symlink("loop-a", dir / "loop-b");
  fs::create_symlink("sub", dir / "to-dir");
  fs::create_directory(dir / "sub");

  EXPECT_EQ(epsjoin::check_output_path(dir / "chain").destination, dir / "target.csr");
  EXPECT_EQ(epsjoin::check_output_path(dir / "dangling").destination, dir / "missing.csr");
  epsjoin::test::expect_io_error([&] { epsjoin::check_output_path(dir / "loop-a"); },
                                 {"too many levels of symbolic links"});
  epsjoin::test::expect_io_error([&] { epsjoin::check_output_path(dir / "to-dir"); },
                                 {"is a directory"});

  write_by_rows(dir / "chain");
  EXPECT_TRUE(fs::is_symlink(dir / "chain"));
  EXPECT_TRUE(fs::is_symlink(dir / "relative"));
  EXPECT_EQ(epsjoin::read_csr(dir / "target.csr").neighbors, (epsjoin::id_vector{1, 4, 0, 0, 1, 2}));
  write_by_blocks(dir / "dangling");
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
  EXPECT_EQ(epsjoin::read_csr(dir / "missing.csr").n_pairs(), 6u);
}

TEST(output_target, a_replaced_file_keeps_its_permissions) {
  private_folder dir;
  epsjoin::test::write_bytes(dir / "private.csr", "old");
  fs::permissions(dir / "private.csr", fs::perms::owner_read | fs::perms::owner_write);
  write_by_rows(dir / "private.csr");
  EXPECT_EQ(fs::status(dir / "private.csr").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

// Each way a CSR reaches a file (rows in place, blocks in order, a table at finish) gives the
// same bytes through a FIFO, which cannot seek, and the FIFO is still a FIFO afterwards.
TEST(output_target, a_fifo_gets_the_file_bytes_and_stays_a_fifo) {
  private_folder dir;
  write_by_rows(dir / "reference.csr");
  const std::string reference = epsjoin::test::read_bytes(dir / "reference.csr");
  for (const bool blocks : {false, true}) {
    SCOPED_TRACE(blocks ? "row blocks" : "rows");
    const std::string fifo = dir / (blocks ? "blocks.fifo" : "rows.fifo");
    fifo_reader reader(fifo);
    blocks ? write_by_blocks(fifo) : write_by_rows(fifo);
    EXPECT_EQ(reader.take(), reference);
    struct stat node {};
    ASSERT_EQ(::stat(fifo.c_str(), &node), 0);
    EXPECT_TRUE(S_ISFIFO(node.st_mode));
  }
  fifo_reader reader(dir / "table.fifo");
  epsjoin::csr_sink table(true);
  table.begin({5, 5, true, false});
  std::copy(ids.begin(), ids.end(), epsjoin::detail::lay_out_rows(table, counts).neighbors);
  table.finish();
  epsjoin::write_csr(dir / "table.fifo", table.table());
  EXPECT_EQ(reader.take(), reference);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"blocks.fifo", "reference.csr", "rows.fifo",
                                                   "table.fifo"}));
}

TEST(output_target, a_pair_npy_is_refused_on_a_stream_before_it_is_opened) {
  private_folder dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  // No reader: opening the FIFO would block, so the refusal must come before it.
  epsjoin::test::expect_io_error(
      [&] { epsjoin::pair_file_sink(dir / "fifo", epsjoin::pair_file_format::npy); },
      {"fifo", "pair count", "a FIFO"});
  fifo_reader reader(dir / "csv.fifo");
  {
    epsjoin::pair_file_sink csv(dir / "csv.fifo", epsjoin::pair_file_format::csv);
    csv.begin({3, 3, true, false});
    const std::vector<epsjoin::index_pair> pairs = {{0, 2}, {2, 0}, {1, 2}};
    csv.consume(pairs);
    csv.finish();
  }
  EXPECT_EQ(reader.take(), "0,2\n1,2\n");
}

TEST(output_target, a_unix_socket_is_connected_and_written) {
  private_folder dir;
  const std::string path = dir / "s.sock";
  const int server = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path);
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(server, 1), 0);
  std::string got;
  std::thread accept([&] {
    const int fd = ::accept(server, nullptr, nullptr);
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
  });
  const std::vector<std::uint64_t> values = {3, 0, 7};
  epsjoin::write_counts(path, values);
  accept.join();
  ::close(server);
  EXPECT_EQ(got, "3\n0\n7\n");
  struct stat node {};
  ASSERT_EQ(::stat(path.c_str(), &node), 0);
  EXPECT_TRUE(S_ISSOCK(node.st_mode));
}

// A character device of our own, made where the test may (root, on a file system that allows
// device nodes): the null device's numbers, written to and left in place.
TEST(output_target, a_device_node_is_written_and_never_replaced) {
  private_folder dir;
  const std::string node_path = dir / "null";
  if (::mknod(node_path.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot make a device node here (" << std::strerror(errno) << ")";
  }
  if (const int fd = ::open(node_path.c_str(), O_WRONLY); fd < 0) {
    GTEST_SKIP() << "device nodes cannot be opened here (" << std::strerror(errno) << ")";
  } else {
    ::close(fd);
  }
  write_by_rows(node_path);
  write_by_blocks(node_path);
  epsjoin::write_pairs_csv(node_path, std::vector<epsjoin::index_pair>{{0, 1}});
  struct stat node {};
  ASSERT_EQ(::stat(node_path.c_str(), &node), 0);
  EXPECT_TRUE(S_ISCHR(node.st_mode));
  EXPECT_EQ(node.st_rdev, ::makedev(1, 3));
  EXPECT_EQ(dir.names(), std::vector<std::string>{"null"});
}

}  // namespace
