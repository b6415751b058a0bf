// MultiOutputBackward: the node of an op with several differentiable outputs (autograd.h).
#include "autograd.h"

namespace fl::autograd {

TensorList MultiOutputBackward::apply(TensorList&& grads) {
  bool any = false;
  for (auto& g : grads) any = any || g != nullptr;
  if (!any) return TensorList(next_edges.size());
  grads.resize(num_outputs);
  auto self = shared_from_this();
  TensorList s;
  s.reserve(saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    Tensor t = saved[i].unpack(self);
    if (t && saved_output_nr[i] > 0 && t->autograd && t->meta().grad_fn == self) t->meta().output_nr = saved_output_nr[i];
    s.push_back(t);
  }
  return fn(grads, s);
}

void record_multi(const char* name, std::vector<Edge> edges, const TensorList& outputs, const TensorList& saved_inputs,
                  const std::vector<int>& saved_outputs, std::function<TensorList(const TensorList&, const TensorList&)> fn) {
  auto node = std::make_shared<MultiOutputBackward>();
  node->node_name = name;
  node->num_outputs = outputs.size();
  node->fn = std::move(fn);
  node->next_edges = std::move(edges);
  for (const Tensor& t : saved_inputs) {
    node->saved.emplace_back(t, false);
    node->saved_output_nr.push_back(-1);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i]) set_history(outputs[i], node, static_cast<uint32_t>(i));
  for (int i : saved_outputs) {
    node->saved.emplace_back(outputs[i], true);
    node->saved_output_nr.push_back(i);
  }
}

}  // namespace fl::autograd
