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
using ember::nn::AvgPool3dOptions;
using ember::nn::MaxPool3dOptions;
using ember::nn::AdaptiveMaxPool1dOptions;
using ember::nn::AdaptiveMaxPool2dOptions;
using ember::nn::AdaptiveMaxPool3dOptions;
using ember::nn::AdaptiveAvgPool3dOptions;
using ember::nn::MaxUnpool1dOptions;
using ember::nn::MaxUnpool2dOptions;
using ember::nn::MaxUnpool3dOptions;
using ember::nn::FractionalMaxPool2dOptions;
using ember::nn::FractionalMaxPool3dOptions;
using ember::nn::AvgPoolOptions;
using ember::nn::MaxPoolOptions;
using ember::nn::AdaptiveMaxPoolOptions;
using ember::nn::MaxUnpoolOptions;
using ember::nn::FractionalMaxPoolOptions;
using ember::nn::ReflectionPadOptions;
using ember::nn::ReplicationPadOptions;
using ember::nn::ConstantPadOptions;
using ember::nn::ReflectionPad1dOptions;
using ember::nn::ReflectionPad2dOptions;
using ember::nn::ReflectionPad3dOptions;
using ember::nn::ReplicationPad1dOptions;
using ember::nn::ReplicationPad2dOptions;
using ember::nn::ReplicationPad3dOptions;
using ember::nn::ZeroPad2dOptions;
using ember::nn::ConstantPad1dOptions;
using ember::nn::ConstantPad2dOptions;
using ember::nn::ConstantPad3dOptions;
using ember::nn::UpsampleOptions;
using ember::nn::Conv3dOptions;
using ember::nn::ConvTranspose1dOptions;
using ember::nn::ConvTranspose3dOptions;
using ember::nn::ConvOptions;
using ember::nn::ConvTransposeOptions;
using ember::nn::EmbeddingOptions;
using ember::nn::EmbeddingFromPretrainedOptions;
using ember::nn::EmbeddingBagOptions;
using ember::nn::EmbeddingBagFromPretrainedOptions;
using ember::nn::EmbeddingBagMode;
using ember::nn::BatchNorm1dOptions;
using ember::nn::BatchNorm2dOptions;
using ember::nn::BatchNorm3dOptions;
using ember::nn::InstanceNormOptions;
using ember::nn::InstanceNorm1dOptions;
using ember::nn::InstanceNorm2dOptions;
using ember::nn::InstanceNorm3dOptions;
using ember::nn::LocalResponseNormOptions;
using ember::nn::CrossMapLRN2dOptions;
using ember::nn::BilinearOptions;
using ember::nn::FoldOptions;
using ember::nn::UnfoldOptions;
using ember::nn::Dropout2dOptions;
using ember::nn::Dropout3dOptions;
using ember::nn::AlphaDropoutOptions;
using ember::nn::FeatureAlphaDropoutOptions;
using ember::nn::MultiMarginLossOptions;
using ember::nn::MultiLabelMarginLossOptions;
using ember::nn::TripletMarginWithDistanceLossOptions;
using ember::nn::CTCLossOptions;
using ember::nn::AnyModule;
using ember::nn::ASMoutput;
using ember::nn::AdaptiveLogSoftmaxWithLossOptions;
using ember::nn::MultiheadAttentionOptions;
using ember::nn::TransformerEncoderLayerOptions;
using ember::nn::TransformerDecoderLayerOptions;
using ember::nn::TransformerEncoderOptions;
using ember::nn::TransformerDecoderOptions;
using ember::nn::TransformerOptions;
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
EMBER_TORCH_HOLDER(AvgPool3d)
EMBER_TORCH_HOLDER(MaxPool3d)
EMBER_TORCH_HOLDER(AdaptiveMaxPool1d)
EMBER_TORCH_HOLDER(AdaptiveMaxPool2d)
EMBER_TORCH_HOLDER(AdaptiveMaxPool3d)
EMBER_TORCH_HOLDER(AdaptiveAvgPool3d)
EMBER_TORCH_HOLDER(MaxUnpool1d)
EMBER_TORCH_HOLDER(MaxUnpool2d)
EMBER_TORCH_HOLDER(MaxUnpool3d)
EMBER_TORCH_HOLDER(FractionalMaxPool2d)
EMBER_TORCH_HOLDER(FractionalMaxPool3d)
EMBER_TORCH_HOLDER(ReflectionPad1d)
EMBER_TORCH_HOLDER(ReflectionPad2d)
EMBER_TORCH_HOLDER(ReflectionPad3d)
EMBER_TORCH_HOLDER(ReplicationPad1d)
EMBER_TORCH_HOLDER(ReplicationPad2d)
EMBER_TORCH_HOLDER(ReplicationPad3d)
EMBER_TORCH_HOLDER(ZeroPad2d)
EMBER_TORCH_HOLDER(ConstantPad1d)
EMBER_TORCH_HOLDER(ConstantPad2d)
EMBER_TORCH_HOLDER(ConstantPad3d)
EMBER_TORCH_HOLDER(Upsample)
EMBER_TORCH_HOLDER(Conv3d)
EMBER_TORCH_HOLDER(ConvTranspose1d)
EMBER_TORCH_HOLDER(ConvTranspose3d)
EMBER_TORCH_HOLDER(EmbeddingBag)
EMBER_TORCH_HOLDER(BatchNorm3d)
EMBER_TORCH_HOLDER(InstanceNorm1d)
EMBER_TORCH_HOLDER(InstanceNorm2d)
EMBER_TORCH_HOLDER(InstanceNorm3d)
EMBER_TORCH_HOLDER(LocalResponseNorm)
EMBER_TORCH_HOLDER(CrossMapLRN2d)
EMBER_TORCH_HOLDER(Bilinear)
EMBER_TORCH_HOLDER(Fold)
EMBER_TORCH_HOLDER(Unfold)
EMBER_TORCH_HOLDER(Dropout3d)
EMBER_TORCH_HOLDER(AlphaDropout)
EMBER_TORCH_HOLDER(FeatureAlphaDropout)
EMBER_TORCH_HOLDER(MultiMarginLoss)
EMBER_TORCH_HOLDER(MultiLabelMarginLoss)
EMBER_TORCH_HOLDER(TripletMarginWithDistanceLoss)
EMBER_TORCH_HOLDER(CTCLoss)
EMBER_TORCH_HOLDER(MultiheadAttention)
EMBER_TORCH_HOLDER(TransformerEncoderLayer)
EMBER_TORCH_HOLDER(TransformerDecoderLayer)
EMBER_TORCH_HOLDER(TransformerEncoder)
EMBER_TORCH_HOLDER(TransformerDecoder)
EMBER_TORCH_HOLDER(Transformer)
EMBER_TORCH_HOLDER(ModuleDict)
EMBER_TORCH_HOLDER(AdaptiveLogSoftmaxWithLoss)
EMBER_TORCH_HOLDER(ParameterDict)
EMBER_TORCH_HOLDER(ParameterList)
#undef EMBER_TORCH_HOLDER
}  // namespace nn
}  // namespace torch
