#include "array_call.hpp"

#include <nanobind/nanobind.h>

#include <cstring>
#include <optional>
#include <string_view>

#include "array_read.hpp"
#include "cuda_memory.hpp"
#include "dlpack.hpp"

namespace nb = nanobind;

namespace gpuk::python {
namespace {

// Some of an Operation's slots (its inputs, or its outputs), without allocating.
struct Slots {
  const ArraySlot* v[kMaxArrays];
  std::size_t count = 0;
  std::size_t size() const { return count; }
  const ArraySlot* operator[](std::size_t i) const { return v[i]; }
};

// The arrays of `seq` (a tuple, or one array when `single`) into args from `first`, checked
// against `slots`. False: the general path's turn.
bool read_all(PyObject* seq, bool single, const Slots& slots, int device,
              std::uintptr_t stream, Args& args, int first, std::uint64_t* n) {
  const Py_ssize_t count = single ? 1 : PyTuple_Size(seq);
  if (count != static_cast<Py_ssize_t>(slots.size()) || first + count > kMaxArrays) return false;
  for (Py_ssize_t i = 0; i < count; ++i) {
    Arg& a = args.v[first + i];
    if (first + i >= args.count) {
      args.count = static_cast<int>(first + i + 1);
      if (!read_array(single ? seq : PyTuple_GetItem(seq, i), device, stream, a)) return false;
    }
    if (*n == 0) *n = a.size;
    const ArraySlot& slot = *slots[i];
    if (slot.output && a.readonly) return false;
    if (const auto want = parse_dtype(slot.type)) {
      if (a.dtype != *want || a.size != *n) return false;
    } else if (a.size * dtype_size(a.dtype) < slot.bytes) {
      return false;
    }
  }
  return true;
}

// The call itself, once the first input may have been read (Dispatch reads it to find the
// Operation).
PyObject* launch(Operation& op, PyObject* inputs, PyObject* out, std::uintptr_t stream, int device, Args& args) {
  if (op.scalar()) return nb::handle(Py_NotImplemented).inc_ref().ptr();  // value=: the general path
  const std::vector<ArraySlot>& slots = op.arrays();
  const auto fallback = [] { return nb::handle(Py_NotImplemented).inc_ref().ptr(); };
  if (slots.size() > static_cast<std::size_t>(kMaxArrays)) return fallback();
  Slots ins, outs;
  for (const ArraySlot& s : slots) {
    Slots& to = s.output ? outs : ins;
    to.v[to.count++] = &s;
  }
  std::uint64_t n = args.count > 0 ? args.v[0].size : 0;
  if (!PyTuple_Check(inputs) || !read_all(inputs, false, ins, device, stream, args, 0, &n)) return fallback();
  const int first_out = static_cast<int>(ins.size());
  bool read = false;
  if (out == Py_None) {
    // No out=: only an operation whose one output is its small answer (read back here).
    if (outs.size() != 1 || !outs[0]->host_result) return fallback();
    read = true;
  } else if (!read_all(out, !PyTuple_Check(out), outs, device, stream, args, first_out, &n)) {
    return fallback();
  }
  // Everything read is what the call takes: now the driver.
  for (int i = 0; i < args.count; ++i) {
    const Arg& a = args.v[i];
    if (!a.from_cai) continue;
    if (!on_device(a.ptr, device)) return fallback();  // the general path says whose memory it is
    // The producer's writes come before the launch on `stream` (1: the legacy default stream, as 0).
    if (a.producer && *a.producer != stream && !(*a.producer == 1 && stream == 0))
      order_streams(device, *a.producer, stream);
  }
  CUdeviceptr pointers[kMaxArrays] = {};
  {
    int in = 0, o = first_out;
    for (std::size_t k = 0; k < slots.size(); ++k)
      pointers[k] = slots[k].output ? (read ? 0 : args.v[o++].ptr) : args.v[in++].ptr;
  }
  const DeviceArrays arrays(pointers, slots.size());
  const CUstream s = reinterpret_cast<CUstream>(stream);
  if (!read) {
    nb::gil_scoped_release release;
    op.launch(arrays, n, s);
  } else {
    std::vector<std::byte> bytes;
    {
      nb::gil_scoped_release release;
      bytes = op.launch_and_read(arrays, n, s);
    }
    return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(bytes.data()), static_cast<Py_ssize_t>(bytes.size()));
  }
  Py_RETURN_NONE;
}

}  // namespace

PyObject* call_arrays(Operation& op, PyObject* inputs, PyObject* out, std::uintptr_t stream, int device) {
  Args args;
  return launch(op, inputs, out, stream, device, args);
}

void Dispatch::add(DType dtype, std::uintptr_t stream, unsigned long thread, PyObject* holder, Operation* op) {
  Py_INCREF(holder);
  entries_.push_back(Entry{dtype, op->min_n(), op->max_n(), stream, thread, holder, op});
}

Dispatch::~Dispatch() {
  for (Entry& e : entries_) Py_XDECREF(e.holder);
}

PyObject* Dispatch::call(PyObject* inputs, PyObject* out, std::uintptr_t stream) {
  if (!PyTuple_Check(inputs) || PyTuple_Size(inputs) < 1) return nb::handle(Py_NotImplemented).inc_ref().ptr();
  Args args;
  args.count = 1;
  if (!read_array(PyTuple_GetItem(inputs, 0), device_, stream, args.v[0]))
    return nb::handle(Py_NotImplemented).inc_ref().ptr();
  const Arg& first = args.v[0];
  const unsigned long thread = PyThread_get_thread_ident();
  for (const Entry& e : entries_) {
    if (e.dtype != first.dtype || first.size < e.min_n || first.size > e.max_n || e.stream != stream ||
        e.thread != thread)
      continue;
    nb::object keep = nb::borrow(e.holder);  // alive while it runs, whatever the entries do
    PyObject* result = launch(*e.op, inputs, out, stream, device_, args);
    if (result && PyBytes_Check(result)) {
      PyObject* pair = PyTuple_Pack(2, result, e.holder);
      Py_DECREF(result);
      return pair;
    }
    return result;
  }
  return nb::handle(Py_NotImplemented).inc_ref().ptr();
}

namespace {

// Every array of `arrays` (a tuple) read into args. False: one is not a device array the fast path
// reads.
bool read_in_order(PyObject* arrays, int device, std::uintptr_t stream, Args& args) {
  if (!PyTuple_Check(arrays)) return false;
  const Py_ssize_t count = PyTuple_Size(arrays);
  if (count < 1 || count > kMaxArrays) return false;
  for (Py_ssize_t i = 0; i < count; ++i) {
    args.count = static_cast<int>(i + 1);
    if (!read_array(PyTuple_GetItem(arrays, i), device, stream, args.v[i])) return false;
  }
  return true;
}

bool same_shapes(const std::vector<std::int64_t>& key, const Args& args) {
  std::size_t k = 0;
  for (int i = 0; i < args.count; ++i) {
    const Arg& a = args.v[i];
    if (k >= key.size() || key[k++] != a.ndim) return false;
    for (int d = 0; d < a.ndim; ++d)
      if (k >= key.size() || key[k++] != a.shape[d]) return false;
  }
  return k == key.size();
}

}  // namespace

bool ShapeDispatch::add(PyObject* arrays, PyObject* extra, std::uintptr_t stream, PyObject* holder, Operation* op) {
  Args args;
  if (!read_in_order(arrays, device_, stream, args)) {
    if (PyErr_Occurred()) PyErr_Clear();
    return false;
  }
  Entry e{{}, extra, stream, PyThread_get_thread_ident(), holder, op};
  for (int i = 0; i < args.count; ++i) {
    e.shapes.push_back(args.v[i].ndim);
    e.shapes.insert(e.shapes.end(), args.v[i].shape, args.v[i].shape + args.v[i].ndim);
  }
  Py_INCREF(extra);
  Py_INCREF(holder);
  entries_.push_back(std::move(e));
  return true;
}

ShapeDispatch::~ShapeDispatch() {
  for (Entry& e : entries_) {
    Py_XDECREF(e.extra);
    Py_XDECREF(e.holder);
  }
}

PyObject* ShapeDispatch::call(PyObject* arrays, PyObject* extra, std::uintptr_t stream) {
  const auto fallback = [] { return nb::handle(Py_NotImplemented).inc_ref().ptr(); };
  if (entries_.empty()) return fallback();
  Args args;
  if (!read_in_order(arrays, device_, stream, args)) return fallback();
  const unsigned long thread = PyThread_get_thread_ident();
  for (const Entry& e : entries_) {
    if (e.stream != stream || e.thread != thread || !same_shapes(e.shapes, args)) continue;
    if (e.extra != extra) {
      const int equal = PyObject_RichCompareBool(e.extra, extra, Py_EQ);
      if (equal < 0) PyErr_Clear();
      if (equal != 1) continue;
    }
    nb::object keep = nb::borrow(e.holder);  // alive while it runs, whatever the entries do
    const std::vector<ArraySlot>& slots = e.op->arrays();
    if (slots.size() != static_cast<std::size_t>(args.count) || e.op->scalar()) return fallback();
    CUdeviceptr pointers[kMaxArrays] = {};
    for (int i = 0; i < args.count; ++i) {
      const Arg& a = args.v[i];
      const ArraySlot& slot = slots[i];
      const auto want = parse_dtype(slot.type);
      if (!want || a.dtype != *want || a.size * dtype_size(a.dtype) != slot.bytes || (slot.output && a.readonly))
        return fallback();
      pointers[i] = a.ptr;
    }
    for (int i = 0; i < args.count; ++i) {
      const Arg& a = args.v[i];
      if (!a.from_cai) continue;
      if (!on_device(a.ptr, device_)) return fallback();
      if (a.producer && *a.producer != stream && !(*a.producer == 1 && stream == 0))
        order_streams(device_, *a.producer, stream);
    }
    {
      nb::gil_scoped_release release;
      e.op->launch(DeviceArrays(pointers, slots.size()), e.op->max_n(), reinterpret_cast<CUstream>(stream));
    }
    Py_RETURN_NONE;
  }
  return fallback();
}

}  // namespace gpuk::python
