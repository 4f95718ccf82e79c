#include "kubeconfig.h"
