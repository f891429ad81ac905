// The array path's one call into C++: device arrays read from __cuda_array_interface__ or
// DLPack with the C API (no Python object built per call beyond what the producer's protocol
// makes), checked against the Operation's slots, and launched. Anything it does not take on its
// own (host arrays, a value, an array to allocate, an empty array, anything to refuse with an
// explanation) is handed back untouched to the Python layer's general path (gpuk/_engine.py),
// which says what is wrong in its own words.
#pragma once
#include <Python.h>

#include <cstdint>
#include <vector>

#include "gpuk/gpuk.hpp"

namespace gpuk::python {

// Operation.call_arrays: launches `op` on the device arrays of `inputs` (a tuple, the inputs in
// order) and `out` (None, one array, or a tuple: the outputs in order), on `stream`, for the
// first input's size. Returns None when launched (out= given), the answer's bytes when the
// operation's small answer was read back (no out=), or NotImplemented: the general path's turn.
// A new reference; null with a Python error set when the launch itself failed.
PyObject* call_arrays(Operation& op, PyObject* inputs, PyObject* out, std::uintptr_t stream, int device);

// gpuk.reduce.argmax(x, out=..., stream=s) and the other family functions without options: the
// Operations that Engine prepared for one family and operation, by dtype, size bucket, stream
// and thread, found in C++ from the first input, then call_arrays.
class Dispatch {
 public:
  explicit Dispatch(int device) : device_(device) {}
  // `holder` is the Python gpuk.Operation whose native Operation is `op` (kept alive here).
  void add(DType dtype, std::uintptr_t stream, unsigned long thread, PyObject* holder, Operation* op);
  // As call_arrays, with the Operation found; NotImplemented when none was prepared yet. A read
  // answer comes back as (bytes, holder).
  PyObject* call(PyObject* inputs, PyObject* out, std::uintptr_t stream);
  std::size_t size() const { return entries_.size(); }
  ~Dispatch();
  Dispatch(const Dispatch&) = delete;
  Dispatch& operator=(const Dispatch&) = delete;

 private:
  struct Entry {
    DType dtype;
    std::uint64_t min_n, max_n;
    std::uintptr_t stream;
    unsigned long thread;
    PyObject* holder;  // owned reference
    Operation* op;
  };
  int device_;
  std::vector<Entry> entries_;
};

// gpuk.Kernel's calls (a declared kernel on device arrays, python/gpuk/_kernel.py): the
// Operations prepared for the shapes of a call's arrays (every one, in the declaration's order),
// its size keywords (`extra`, compared by value), stream and thread. A call whose arrays have the
// shapes of one prepared before is read, checked (dtype, bytes, read-only outputs, the pointer's
// device) and launched in C++, for the Operation's sizes (n = max_n).
class ShapeDispatch {
 public:
  explicit ShapeDispatch(int device) : device_(device) {}
  // Serves `holder` (a gpuk.Operation whose native Operation is `op`) for calls on arrays of the
  // shapes that `arrays` have, `extra` and `stream`, from this thread. False: the arrays are not
  // all device arrays that the fast path reads (host arrays: the general path's every time).
  bool add(PyObject* arrays, PyObject* extra, std::uintptr_t stream, PyObject* holder, Operation* op);
  // None when launched; NotImplemented: the general path's turn (no Operation for these shapes
  // yet, host arrays, anything to refuse with an explanation). Null with a Python error set when
  // the launch failed.
  PyObject* call(PyObject* arrays, PyObject* extra, std::uintptr_t stream);
  std::size_t size() const { return entries_.size(); }
  ~ShapeDispatch();
  ShapeDispatch(const ShapeDispatch&) = delete;
  ShapeDispatch& operator=(const ShapeDispatch&) = delete;

 private:
  struct Entry {
    std::vector<std::int64_t> shapes;  // per array: ndim, then its extents
    PyObject* extra;                   // owned reference
    std::uintptr_t stream;
    unsigned long thread;
    PyObject* holder;  // owned reference
    Operation* op;
  };
  int device_;
  std::vector<Entry> entries_;
};

}  // namespace gpuk::python
