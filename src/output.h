#ifndef KINF_OUTPUT_H
#define KINF_OUTPUT_H
#endif
