#ifndef KINF_PAGER_H
#define KINF_PAGER_H
#endif
