#ifndef KINF_INFORMER_H
#define KINF_INFORMER_H
#endif
