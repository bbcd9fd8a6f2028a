// ember::data: datasets, transforms, samplers and the DataLoader (libtorch's torch::data).
#pragma once

#include "ember/nn/data/dataloader.h"
#include "ember/nn/data/dataset.h"
#include "ember/nn/data/datasets.h"
#include "ember/nn/data/samplers.h"
#include "ember/nn/data/transforms.h"
