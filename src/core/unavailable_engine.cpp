// Stand-ins for engines this build does not have, so asking for one is a clear error that says
// why ("not compiled in") rather than "unknown engine".

#include "base/expects.hpp"
#include "core/builtin_engines.hpp"

namespace epsjoin::detail {

namespace {

class unavailable_engine final : public engine {
 public:
  unavailable_engine(std::string name, std::string processor, std::string description,
                     std::string reason)
      : name_(std::move(name)),
        processor_(std::move(processor)),
        description_(std::move(description)),
        reason_(std::move(reason)) {}
  std::string_view name() const override { return name_; }
  std::string_view processor() const override { return processor_; }
  std::string_view description() const override { return description_; }
  std::string unavailable_reason() const override { return reason_; }
  void run(join_request&) const override { throw unavailable(name_ + ": " + reason_); }

 private:
  std::string name_, processor_, description_, reason_;
};

}  // namespace

std::unique_ptr<engine> make_unavailable_engine(std::string name, std::string processor,
                                                std::string description, std::string reason) {
  return std::make_unique<unavailable_engine>(std::move(name), std::move(processor),
                                              std::move(description), std::move(reason));
}

}  // namespace epsjoin::detail
