// The restricted unpickler of torch.save files: a state dict as torch writes it is read; globals,
// opcodes and shapes outside it are refused naming the file, without running anything; hostile
// structures (cycles, deep nesting, truncation, bad memo and stack use) end in a UserError.
#include "models/hf/torch_pickle.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {
namespace {

using namespace std::string_literals;

// Writes pickle opcodes (protocol 2, as torch.save does).
struct Pickle {
  std::string b = "\x80\x02";
  Pickle& op(char c) {
    b += c;
    return *this;
  }
  Pickle& raw(const std::string& s) {
    b += s;
    return *this;
  }
  Pickle& global(const std::string& module, const std::string& name) {
    return raw("c" + module + "\n" + name + "\n");
  }
  Pickle& str(const std::string& s) {
    b += 'X';
    const auto n = static_cast<uint32_t>(s.size());
    for (int k = 0; k < 4; ++k) b += static_cast<char>((n >> (8 * k)) & 0xff);
    b += s;
    return *this;
  }
  Pickle& i1(int v) { return op('K').op(static_cast<char>(v)); }
  Pickle& ints(std::initializer_list<int> v) {
    op('(');
    for (int x : v) i1(x);
    return op('t');
  }
  Pickle& ordered_dict() { return global("collections", "OrderedDict").op(')').op('R'); }
  Pickle& storage(const std::string& key, int numel, const char* type = "FloatStorage") {
    op('(').str("storage").global("torch", type).str(key).str("cpu").i1(numel).op('t');
    return op('Q');  // BINPERSID
  }
  // _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict()).
  Pickle& tensor(const std::string& key, int numel, std::initializer_list<int> size,
                 std::initializer_list<int> stride, int offset = 0) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    storage(key, numel).i1(offset).ints(size).ints(stride).op('\x89').ordered_dict();
    return op('t').op('R');
  }
  std::string done() { return b + "."; }
};

std::string refusal(const std::string& bytes, StorageIds ids = StorageIds::kZip) {
  try {
    read_state_dict_pickle(bytes, ids, "weights.bin");
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "weights.bin") << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

#define EXPECT_REFUSED(bytes, phrase)                    \
  do {                                                   \
    const std::string m_ = refusal(bytes);               \
    EXPECT_NE(m_.find(phrase), std::string::npos) << m_; \
  } while (0)

TEST(TorchPickle, StateDictAsTorchWritesIt) {
  Pickle p;
  p.ordered_dict().op('(');
  p.str("w").tensor("0", 6, {2, 3}, {3, 1});
  p.str("b").tensor("1", 4, {2}, {2}, 1);
  p.str("w_again").tensor("0", 6, {3, 2}, {1, 3});  // a transposed view of the same storage
  p.op('u');
  // The state dict's _metadata attribute, set by BUILD, is not needed.
  p.op('}').str("_metadata").ordered_dict().op('s').op('b');
  size_t end = 0;
  const std::string bytes = p.done() + "trailing bytes";
  const PickledStateDict d = read_state_dict_pickle(bytes, StorageIds::kZip, "f", &end);
  EXPECT_EQ(end, bytes.size() - std::string("trailing bytes").size());
  ASSERT_EQ(d.storages.size(), 2u);
  EXPECT_EQ(d.storages[0].key, "0");
  EXPECT_EQ(d.storages[0].dtype, "F32");
  EXPECT_EQ(d.storages[0].numel, 6);
  ASSERT_EQ(d.tensors.size(), 3u);
  EXPECT_EQ(d.tensors[0].name, "w");
  EXPECT_EQ(d.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(d.tensors[0].stride, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(d.tensors[1].offset, 1);
  EXPECT_EQ(d.tensors[1].storage, 1u);
  EXPECT_EQ(d.tensors[2].storage, 0u);
  EXPECT_EQ(d.tensors[2].stride, (std::vector<int64_t>{1, 3}));
}

TEST(TorchPickle, ParametersAndStorageTypes) {
  Pickle p;
  p.op('}').op('(');
  // nn.Parameter as torch pickles it: _rebuild_parameter(tensor, requires_grad, hooks).
  p.str("p").global("torch._utils", "_rebuild_parameter").op('(');
  p.tensor("0", 2, {2}, {1}).op('\x88').ordered_dict().op('t').op('R');
  p.str("h").global("torch._utils", "_rebuild_tensor_v2").op('(');
  p.op('(').str("storage").global("torch", "BFloat16Storage").str("1").str("cpu").i1(3).op('t');
  p.op('Q').i1(0).ints({3}).ints({1}).op('\x89').ordered_dict().op('t').op('R');
  p.op('u');
  const PickledStateDict d = read_state_dict_pickle(p.done(), StorageIds::kZip, "f");
  ASSERT_EQ(d.tensors.size(), 2u);
  EXPECT_EQ(d.tensors[0].name, "p");
  EXPECT_EQ(d.storages[1].dtype, "BF16");
}

TEST(TorchPickle, GlobalsThatRunCodeAreRefused) {
  // What a malicious checkpoint does: os.system("...") through GLOBAL and REDUCE.
  EXPECT_REFUSED(
      Pickle().global("posix", "system").str("touch /tmp/pwned").op('\x85').op('R').done(),
      "the global posix.system");
  EXPECT_REFUSED(Pickle().global("builtins", "eval").done(), "the global builtins.eval");
  EXPECT_REFUSED(Pickle().global("torch", "load").done(), "the global torch.load");
  // Allowed names used as what they are not.
  EXPECT_REFUSED(Pickle().global("torch", "FloatStorage").op(')').op('R').done(),
                 "called as a function");
  EXPECT_REFUSED(Pickle().global("collections", "OrderedDict").i1(1).op('\x85').op('R').done(),
                 "OrderedDict built from arguments");
  // A plain pickle (the legacy format's headers) takes no global at all.
  try {
    read_plain_pickle(Pickle().ordered_dict().done(), "f");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("collections.OrderedDict"), std::string::npos);
  }
}

TEST(TorchPickle, OpcodesOutsideWeightsOnlyAreRefused) {
  EXPECT_REFUSED(Pickle().raw("iposix\nsystem\n").done(), "opcode 0x69");  // INST
  EXPECT_REFUSED(Pickle().op('\x93').done(), "opcode 0x93");               // STACK_GLOBAL
  EXPECT_REFUSED(Pickle().op('\x81').done(), "opcode 0x81");               // NEWOBJ
  EXPECT_REFUSED(std::string("\x80\x07."), "unknown pickle protocol");
}

TEST(TorchPickle, MalformedPicklesAreRefused) {
  EXPECT_REFUSED(std::string("\x80\x02X\xff\x00\x00\x00ab", 10), "truncated");
  EXPECT_REFUSED(Pickle().b, "truncated");  // no STOP
  EXPECT_REFUSED(Pickle().raw("h\x05").done(), "memo entry 5 was never stored");
  EXPECT_REFUSED(Pickle().done(), "empty stack");
  EXPECT_REFUSED(Pickle().op('}').i1(1).i1(2).op('u').done(), "no MARK");
  EXPECT_REFUSED(Pickle().op('}').op('(').i1(1).op('u').done(), "odd number");
  EXPECT_REFUSED(Pickle().i1(1).i1(2).op('a').done(), "APPEND to an int");
  EXPECT_REFUSED(Pickle().op(']').i1(1).i1(2).op('s').done(), "SETITEM on a list");
  // MARK hides what is below it.
  EXPECT_REFUSED(Pickle().i1(1).op('(').op('\x85').done(), "short stack");
}

TEST(TorchPickle, WhatIsNoStateDictOfTensorsIsRefused) {
  EXPECT_REFUSED(Pickle().i1(1).done(), "holds an int, not a state dict");
  EXPECT_REFUSED(Pickle().op('}').str("w").i1(5).op('s').done(), "'w' is an int, not a tensor");
  EXPECT_REFUSED(Pickle().op('}').i1(5).i1(5).op('s').done(), "key is an int");
  // A nested dict ({"state_dict": {...}}, as training scripts save): not what from_pretrained
  // reads either.
  EXPECT_REFUSED(Pickle().op('}').str("state_dict").op('}').op('s').done(), "is a dict");
  // A negative size (BININT -1).
  Pickle n2;
  n2.op('}').str("w").global("torch._utils", "_rebuild_tensor_v2").op('(');
  n2.storage("0", 6).i1(0).op('(').raw("J\xff\xff\xff\xff").op('t').ints({1});
  n2.op('\x89').ordered_dict().op('t').op('R').op('s');
  EXPECT_REFUSED(n2.done(), "negative number -1");
  Pickle arity;
  arity.op('}').str("w").global("torch._utils", "_rebuild_tensor_v2").op('(').storage("0", 6);
  arity.op('t').op('R').op('s');
  EXPECT_REFUSED(arity.done(), "rebuilt from 1 arguments");
  Pickle over;
  over.op('}').str("w").global("torch._utils", "_rebuild_tensor_v2").op('(').str("x").i1(0);
  over.ints({1}).ints({1}).op('\x89').ordered_dict().op('t').op('R').op('s');
  EXPECT_REFUSED(over.done(), "a tensor over a string");
  Pickle pid;
  pid.op('(').str("module").global("torch", "FloatStorage").str("0").str("cpu").i1(1).op('t');
  EXPECT_REFUSED(pid.op('Q').done(), "persistent id of no storage");
  Pickle twice;
  twice.op('}').str("a").tensor("0", 6, {6}, {1}).op('s').str("b");
  twice.global("torch._utils", "_rebuild_tensor_v2").op('(');
  twice.op('(').str("storage").global("torch", "HalfStorage").str("0").str("cpu").i1(6).op('t');
  twice.op('Q').i1(0).ints({6}).ints({1}).op('\x89').ordered_dict().op('t').op('R').op('s');
  EXPECT_REFUSED(twice.done(), "named twice with different types");
  // Storages of dtypes no weights file of lm-eval's models holds.
  EXPECT_REFUSED(Pickle().global("torch", "ComplexFloatStorage").done(),
                 "the global torch.ComplexFloatStorage");
}

TEST(TorchPickle, LegacyStorageIdsAndViews) {
  Pickle ok;
  ok.op('}').str("w").global("torch._utils", "_rebuild_tensor_v2").op('(');
  ok.op('(').str("storage").global("torch", "FloatStorage").str("9").str("cpu").i1(2).op('N');
  ok.op('t').op('Q').i1(0).ints({2}).ints({1}).op('\x89').ordered_dict().op('t').op('R').op('s');
  EXPECT_EQ(read_state_dict_pickle(ok.done(), StorageIds::kLegacy, "f").storages[0].key, "9");
  // The zip format's 5-tuples are not legacy ids, and a view of another storage is refused.
  EXPECT_NE(refusal(ok.done(), StorageIds::kZip).find("not a 5-tuple"), std::string::npos);
  Pickle view;
  view.op('(').str("storage").global("torch", "FloatStorage").str("9").str("cpu").i1(2);
  view.op('(').str("8").i1(0).i1(2).op('t').op('t').op('Q');
  EXPECT_NE(refusal(view.done(), StorageIds::kLegacy).find("view of another storage"),
            std::string::npos);
}

TEST(TorchPickle, CyclesAndDeepNestingCostNothing) {
  // A list holding itself, as a dict value: refused as no tensor, without looping.
  Pickle cycle;
  cycle.op('}').str("w").op(']').raw("q\x01").raw("h\x01").op('a').op('s');
  EXPECT_REFUSED(cycle.done(), "'w' is a list");
  // 200000 lists nested in each other: destroyed without recursion.
  Pickle deep;
  for (int i = 0; i < 200000; ++i) deep.op(']');
  for (int i = 0; i < 199999; ++i) deep.op('a');
  EXPECT_REFUSED(deep.done(), "holds a list");
  // A plain pickle's values are bounded in depth.
  Pickle nested;
  for (int i = 0; i < 40; ++i) nested.op(']');
  for (int i = 0; i < 39; ++i) nested.op('a');
  try {
    read_plain_pickle(nested.done(), "f");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 32"), std::string::npos);
  }
}

TEST(TorchPickle, PlainValues) {
  Pickle p;
  p.op('}').op('(').str("protocol_version").raw("M\xe9\x03").str("little_endian").op('\x88');
  p.str("neg").raw("J\xfe\xff\xff\xff").str("big").raw("\x8a\x05\x00\x00\x00\x00\x01"s);
  p.str("f").raw("G\x3f\xf8\x00\x00\x00\x00\x00\x00"s).str("none").op('N').op('u');
  const Json j = read_plain_pickle(p.done(), "f");
  EXPECT_EQ(j["protocol_version"], 1001);
  EXPECT_EQ(j["little_endian"], true);
  EXPECT_EQ(j["neg"], -2);
  EXPECT_EQ(j["big"], int64_t{1} << 32);
  EXPECT_EQ(j["f"], 1.5);
  EXPECT_TRUE(j["none"].is_null());
  EXPECT_NE(refusal(Pickle().raw("\x8a\x09").raw(std::string(9, '\x01')).done()).find("9 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace lmeval::hf
