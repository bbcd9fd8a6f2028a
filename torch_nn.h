// ember/torch_nn.h: libtorch's torch::nn over ember's modules (part of <ember/torch.h>, which
// includes it): the options classes, the functional namespace and the module holders
// (torch::nn::Linear is a ModuleHolder of ember::nn::Linear, libtorch's LinearImpl).
#pragma once

#include "ember/torch.h"  // (torch.h includes this header at its end)

namespace torch {
// ---------------------------------------------------------------- nn
namespace nn {
using ember::nn::Module;
using ember::nn::ModuleHolder;
using ember::nn::BCELossOptions;
using ember::nn::BCEWithLogitsLossOptions;
using ember::nn::CrossEntropyLossOptions;
using ember::nn::LeakyReLUOptions;
using ember::nn::CELUOptions;
using ember::nn::ELUOptions;
using ember::nn::GELUOptions;
using ember::nn::GLUOptions;
using ember::nn::HardshrinkOptions;
using ember::nn::HardtanhOptions;
using ember::nn::LogSoftmaxOptions;
using ember::nn::PReLUOptions;
using ember::nn::ReLU6Options;
using ember::nn::ReLUOptions;
using ember::nn::RReLUOptions;
using ember::nn::SELUOptions;
using ember::nn::SoftmaxOptions;
using ember::nn::SoftminOptions;
using ember::nn::SoftplusOptions;
using ember::nn::SoftshrinkOptions;
using ember::nn::ThresholdOptions;
using ember::nn::GRUCellOptions;
using ember::nn::GRUOptions;
using ember::nn::LSTMCellOptions;
using ember::nn::LSTMOptions;
using ember::nn::RNNCellOptions;
using ember::nn::RNNOptions;
using ember::nn::AdaptiveAvgPool1dOptions;
using ember::nn::AdaptiveAvgPool2dOptions;
using ember::nn::AvgPool1dOptions;
using ember::nn::CosineEmbeddingLossOptions;
using ember::nn::CosineSimilarityOptions;
using ember::nn::FlattenOptions;
using ember::nn::HingeEmbeddingLossOptions;
using ember::nn::HuberLossOptions;
using ember::nn::KLDivLossOptions;
using ember::nn::LPPool1dOptions;
using ember::nn::LPPool2dOptions;
using ember::nn::MarginRankingLossOptions;
using ember::nn::MaxPool1dOptions;
using ember::nn::MultiLabelSoftMarginLossOptions;
using ember::nn::PairwiseDistanceOptions;
using ember::nn::PixelShuffleOptions;
using ember::nn::PixelUnshuffleOptions;
using ember::nn::PoissonNLLLossOptions;
using ember::nn::SoftMarginLossOptions;
using ember::nn::TripletMarginLossOptions;
using ember::nn::UnflattenOptions;
using ember::nn::LinearOptions;
using ember::nn::NLLLossOptions;
using ember::nn::SmoothL1LossOptions;
using MSELossOptions = ember::nn::LossOptions;
using ember::nn::AvgPool2dOptions;
using ember::nn::BatchNormOptions;
using ember::nn::Conv1dOptions;
using ember::nn::Conv2dOptions;
using ember::nn::ConvTranspose2dOptions;
using ember::nn::DropoutOptions;
using ember::nn::GroupNormOptions;
using ember::nn::LayerNormOptions;
using ember::nn::MaxPool2dOptions;
using L1LossOptions = ember::nn::LossOptions;
namespace functional = ember::nn::functional;
namespace init = ember::nn::init;
namespace utils {
using ember::nn::clip_grad_norm_;
}

// libtorch's FooImpl is ember's nn::Foo; torch::nn::Foo is its holder.
#define EMBER_TORCH_HOLDER(Name) \
  using Name##Impl = ember::nn::Name; \
  EMBER_MODULE(Name);
EMBER_TORCH_HOLDER(Linear)
EMBER_TORCH_HOLDER(Embedding)
EMBER_TORCH_HOLDER(RMSNorm)
EMBER_TORCH_HOLDER(Sequential)
EMBER_TORCH_HOLDER(ModuleList)
EMBER_TORCH_HOLDER(ReLU)
EMBER_TORCH_HOLDER(SiLU)
EMBER_TORCH_HOLDER(GELU)
EMBER_TORCH_HOLDER(Sigmoid)
EMBER_TORCH_HOLDER(Tanh)
EMBER_TORCH_HOLDER(LeakyReLU)
EMBER_TORCH_HOLDER(MSELoss)
EMBER_TORCH_HOLDER(L1Loss)
EMBER_TORCH_HOLDER(SmoothL1Loss)
EMBER_TORCH_HOLDER(NLLLoss)
EMBER_TORCH_HOLDER(CrossEntropyLoss)
EMBER_TORCH_HOLDER(BCELoss)
EMBER_TORCH_HOLDER(BCEWithLogitsLoss)
EMBER_TORCH_HOLDER(Conv1d)
EMBER_TORCH_HOLDER(Conv2d)
EMBER_TORCH_HOLDER(ConvTranspose2d)
EMBER_TORCH_HOLDER(MaxPool2d)
EMBER_TORCH_HOLDER(AvgPool2d)
EMBER_TORCH_HOLDER(AdaptiveAvgPool2d)
EMBER_TORCH_HOLDER(BatchNorm1d)
EMBER_TORCH_HOLDER(BatchNorm2d)
EMBER_TORCH_HOLDER(LayerNorm)
EMBER_TORCH_HOLDER(GroupNorm)
EMBER_TORCH_HOLDER(Dropout)
EMBER_TORCH_HOLDER(Dropout2d)
EMBER_TORCH_HOLDER(Functional)
EMBER_TORCH_HOLDER(ELU)
EMBER_TORCH_HOLDER(SELU)
EMBER_TORCH_HOLDER(CELU)
EMBER_TORCH_HOLDER(Hardshrink)
EMBER_TORCH_HOLDER(Softshrink)
EMBER_TORCH_HOLDER(Hardtanh)
EMBER_TORCH_HOLDER(ReLU6)
EMBER_TORCH_HOLDER(RReLU)
EMBER_TORCH_HOLDER(GLU)
EMBER_TORCH_HOLDER(Softplus)
EMBER_TORCH_HOLDER(Threshold)
EMBER_TORCH_HOLDER(Softmax)
EMBER_TORCH_HOLDER(Softmin)
EMBER_TORCH_HOLDER(LogSoftmax)
EMBER_TORCH_HOLDER(LogSigmoid)
EMBER_TORCH_HOLDER(Mish)
EMBER_TORCH_HOLDER(Softsign)
EMBER_TORCH_HOLDER(Tanhshrink)
EMBER_TORCH_HOLDER(Softmax2d)
EMBER_TORCH_HOLDER(Identity)
EMBER_TORCH_HOLDER(PReLU)
EMBER_TORCH_HOLDER(RNN)
EMBER_TORCH_HOLDER(LSTM)
EMBER_TORCH_HOLDER(GRU)
EMBER_TORCH_HOLDER(RNNCell)
EMBER_TORCH_HOLDER(LSTMCell)
EMBER_TORCH_HOLDER(GRUCell)
EMBER_TORCH_HOLDER(HuberLoss)
EMBER_TORCH_HOLDER(KLDivLoss)
EMBER_TORCH_HOLDER(SoftMarginLoss)
EMBER_TORCH_HOLDER(HingeEmbeddingLoss)
EMBER_TORCH_HOLDER(PoissonNLLLoss)
EMBER_TORCH_HOLDER(MultiLabelSoftMarginLoss)
EMBER_TORCH_HOLDER(CosineSimilarity)
EMBER_TORCH_HOLDER(PairwiseDistance)
EMBER_TORCH_HOLDER(MarginRankingLoss)
EMBER_TORCH_HOLDER(CosineEmbeddingLoss)
EMBER_TORCH_HOLDER(TripletMarginLoss)
EMBER_TORCH_HOLDER(Flatten)
EMBER_TORCH_HOLDER(Unflatten)
EMBER_TORCH_HOLDER(PixelShuffle)
EMBER_TORCH_HOLDER(PixelUnshuffle)
EMBER_TORCH_HOLDER(MaxPool1d)
EMBER_TORCH_HOLDER(AvgPool1d)
EMBER_TORCH_HOLDER(AdaptiveAvgPool1d)
EMBER_TORCH_HOLDER(LPPool1d)
EMBER_TORCH_HOLDER(LPPool2d)
#undef EMBER_TORCH_HOLDER
}  // namespace nn
}  // namespace torch
