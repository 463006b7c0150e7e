#pragma once
// Dispatch's counting sink gives each row of a self-join that includes self pairs one slot in
// front, holding the query's own id. An engine that lays its table out with those slots already
// filled (the GPU's query-order table) asks the sink to leave them alone: its copy out is then
// the first and only write to each page of the table, instead of a pass that faults every page
// in to write one id a row followed by a second pass that copies the rows.

namespace epsjoin::detail {

class self_slot_sink {
 public:
  /// Called before the rows are laid out; the caller then writes every slot itself.
  virtual void leave_self_slots_to_engine() = 0;

 protected:
  ~self_slot_sink() = default;
};

}  // namespace epsjoin::detail
