// A typed handle on a registered op (tessera::name), for calls through PyTorch's dispatcher.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>

namespace tessera::torch_ops {

template <class Sig>
c10::TypedOperatorHandle<Sig> op_handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Sig>();
}

}  // namespace tessera::torch_ops
