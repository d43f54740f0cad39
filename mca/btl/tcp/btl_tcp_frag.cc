// btl/tcp fragment pools.
#include "btl_tcp_frag.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace weft::btl::tcp {

FragPool::~FragPool()
{
    for (Frag *f : all_) {
        std::free(f->buffer);
        delete f;
    }
}

Frag *FragPool::get()
{
    Frag *f = nullptr;
    if (!free_.empty()) {
        f = free_.back();
        free_.pop_back();
    } else {
        if (max_ != 0 && all_.size() >= max_)
            return nullptr;
        unsigned char *buffer = nullptr;
        if (capacity_ > 0) {
            // aligned_alloc wants a multiple of the alignment
            buffer = static_cast<unsigned char *>(
                std::aligned_alloc(64, (capacity_ + 63) & ~size_t(63)));
            if (!buffer)
                return nullptr;
        }
        f = new (std::nothrow) Frag{};
        if (!f) {
            std::free(buffer);
            return nullptr;
        }
        f->module = module_;
        f->pool = this;
        f->buffer = buffer;
        f->capacity = capacity_;
        all_.push_back(f);
    }
    f->des = weft_btl_descriptor_t{};
    f->des.des_segments = &f->segment;
    f->des.des_segment_count = 1;
    f->des.order = WEFT_BTL_NO_ORDER;
    f->segment.seg_addr = f->buffer;
    f->segment.seg_len = 0;
    f->user = weft_btl_segment_t{nullptr, 0};
    f->endpoint = nullptr;
    f->written = 0;
    f->wire_end = 0;
    f->written_ms = 0;
    f->seq = 0;
    f->rdma = nullptr;
    f->kind = FragKind::send;
    f->state = FragState::loaned;
    f->frame_type = wire::kData;
    f->tag = 0;
    f->header_built = false;
    return f;
}

void FragPool::put(Frag *f)
{
    f->state = FragState::free;
    free_.push_back(f);
}

} // namespace weft::btl::tcp
