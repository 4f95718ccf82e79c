#include "indexer.h"
