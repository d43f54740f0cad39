// coll/basic's schedule engine: rounds of transfers over the PML, then local steps; the
// requests of non-blocking collectives, advanced by the progress engine.
#include "coll_basic.h"

#include <pml/pml.h>
#include <weft/op.h>
#include <weft/runtime.h>

#include <algorithm>
#include <cstring>

namespace weft::coll::basic {

namespace {

// The PML every rank selected (set before any communicator exists).
weft_pml_module_t *pml() { return weft_pml_selected(); }

// Non-blocking collectives in flight, advanced by progress().
CollRequest *active = nullptr;

int progress()
{
    int n = 0;
    for (CollRequest **link = &active; *link;) {
        CollRequest *r = *link;
        if (!r->sched.advance()) {
            link = &r->next_active;
            continue;
        }
        *link = r->next_active;
        r->next_active = nullptr;
        r->status.error = r->sched.status();
        r->active = false;
        r->complete = true;
        ++n;
        if (r->freed)
            delete r;
    }
    return n;
}

void free_request(weft_request_t *req)
{
    auto *r = static_cast<CollRequest *>(req);
    if (r->complete)
        delete r;
    else
        r->freed = true; // deleted when its schedule ends
}

weft_status_t no_cancel(weft_request_t *) { return WEFT_SUCCESS; } // collectives are not cancelled

bool progress_registered = false;

} // namespace

void Sched::reset(weft_comm_t *comm, weft_op_t *op)
{
    comm_ = comm;
    op_ = op;
    tag_ = weft_comm_coll_tag(comm);
    local_comm_ = weft_comm_is_inter(comm) ? weft_comm_local_comm(comm) : nullptr;
    local_tag_ = local_comm_ ? weft_comm_coll_tag(local_comm_) : 0;
    local_ = false;
    steps_.clear();
    rounds_.clear();
    building_ = Round{};
    scratch_used_ = 0; // the buffers stay for the next schedule
    pending_.clear();
    round_ = 0;
    done_ = false;
    blocking_ = false;
    status_ = WEFT_SUCCESS;
}

char *Sched::scratch(size_t bytes)
{
    bytes = bytes ? bytes : 1;
    if (scratch_used_ == scratch_.size())
        scratch_.push_back({nullptr, 0});
    Scratch &b = scratch_[scratch_used_++];
    if (b.size < bytes) {
        b.mem = std::make_unique<char[]>(bytes);
        b.size = bytes;
    }
    return b.mem.get();
}

weft_status_t Sched::start()
{
    next();
    round_ = 0;
    done_ = rounds_.empty();
    if (!done_)
        status_ = post_round();
    if (status_ != WEFT_SUCCESS)
        done_ = true;
    return status_;
}

// Post the transfers of round_ (receives first).
weft_status_t Sched::post_round()
{
    const Round &rd = rounds_[round_];
    const size_t begin = round_ ? rounds_[round_ - 1].end : 0, end = rd.end;
    weft_pml_module_t *p = pml();
    // A blocking schedule's round of one receive and nothing to send: the PML's blocking
    // receive, without a request to make, watch and free.
    if (blocking_ && rd.recvs == 1 && rd.sends == 0)
        for (size_t i = begin; i < end; ++i)
            if (const Step &st = steps_[i]; st.kind == Step::recv) {
                weft_msg_status_t ms{};
                return p->pml_recv(p, st.dst, st.count, st.type, st.peer,
                                   st.local ? local_tag_ : tag_, st.local ? local_comm_ : comm_,
                                   &ms);
            }
    // The receives first (a peer's message finds its receive posted), then the sends. Blocking
    // sends cost least (no request) and, for eager messages, wait only for room; but a round of
    // several large sends posts them all at once, so that their receivers pull them at the same
    // time (a bcast root's children) instead of one after the other.
    const bool overlap = rd.sends > 1 && rd.large;
    for (int pass = 0; pass < 2; ++pass) {
        if ((pass == 0 && rd.recvs == 0) || (pass == 1 && rd.sends == 0))
            continue;
        for (size_t i = begin; i < end; ++i) {
            const Step &st = steps_[i];
            weft_comm_t *const comm = st.local ? local_comm_ : comm_;
            const int tag = st.local ? local_tag_ : tag_;
            weft_request_t *req = nullptr;
            weft_status_t rc = WEFT_SUCCESS;
            if (pass == 0 && st.kind == Step::recv)
                rc = p->pml_irecv(p, st.dst, st.count, st.type, st.peer, tag, comm, &req);
            else if (pass == 1 && st.kind == Step::send && blocking_ && !overlap)
                rc = p->pml_send(p, st.src, st.count, st.type, st.peer, tag, WEFT_SEND_STANDARD,
                                 comm);
            else if (pass == 1 && st.kind == Step::send)
                rc = p->pml_isend(p, st.src, st.count, st.type, st.peer, tag, WEFT_SEND_STANDARD,
                                  comm, &req);
            else
                continue;
            if (!req) {
                if (rc != WEFT_SUCCESS)
                    return rc;
                continue;
            }
            if (rc != WEFT_SUCCESS)
                return rc;
            pending_.push_back(req);
        }
    }
    return WEFT_SUCCESS;
}

void Sched::cancel_pending()
{
    for (weft_request_t *r : pending_)
        if (r->complete)
            r->pml_free(r);
        else
            r->freed = true;
    pending_.clear();
}

bool Sched::advance()
{
    while (!done_) {
        // Every transfer of the round done?
        for (weft_request_t *r : pending_)
            if (!r->complete)
                return false;
        for (weft_request_t *r : pending_) {
            if (r->status.error != WEFT_SUCCESS && status_ == WEFT_SUCCESS)
                status_ = r->status.error;
            r->pml_free(r);
        }
        pending_.clear();
        if (status_ != WEFT_SUCCESS) {
            done_ = true;
            break;
        }
        // Its local steps.
        const size_t begin = round_ ? rounds_[round_ - 1].end : 0, end = rounds_[round_].end;
        for (size_t i = begin; rounds_[round_].local && i < end; ++i) {
            const Step &st = steps_[i];
            if (st.kind == Step::copy) {
                weft_datatype_copy(st.dst, st.dcount, st.dtype, st.src, st.count, st.type);
            } else if (st.kind == Step::reduce) {
                if (weft_status_t rc = weft_op_reduce(op_, st.src, st.dst, st.count, st.type);
                    rc != WEFT_SUCCESS) {
                    status_ = rc;
                    break;
                }
            }
        }
        if (status_ != WEFT_SUCCESS || ++round_ == rounds_.size()) {
            done_ = true;
            break;
        }
        if ((status_ = post_round()) != WEFT_SUCCESS) {
            cancel_pending();
            done_ = true;
        }
    }
    return true;
}

weft_status_t Sched::run()
{
    blocking_ = true;
    if (start() != WEFT_SUCCESS) {
        cancel_pending();
        return status_;
    }
    weft::progress_wait([this] { return advance(); });
    return status_;
}

CollRequest::~CollRequest()
{
    for (weft_datatype_t *t : types)
        weft_datatype_release(t);
    weft_op_release(sched.op());
    if (comm)
        weft_comm_release(comm);
}

void Sched::types_used(std::vector<weft_datatype_t *> &out) const
{
    for (const Step &st : steps_)
        for (weft_datatype_t *t : {st.type, st.dtype})
            if (t && std::find(out.begin(), out.end(), t) == out.end())
                out.push_back(t);
}

weft_status_t start_request(Sched &&sched, weft_request_t **request)
{
    if (!progress_registered) {
        if (weft_status_t rc = weft_progress_register(progress); rc != WEFT_SUCCESS)
            return rc;
        progress_registered = true;
    }
    auto *r = new CollRequest;
    // Errors at completion are raised on the communicator; the FT layer finds the collective
    // by its tag.
    weft_request_init(r, WEFT_REQUEST_COLL, sched.comm(), WEFT_PROC_NULL, sched.tag());
    r->active = true;
    r->pml_free = free_request;
    r->pml_cancel = no_cancel;
    r->sched = std::move(sched);
    weft_comm_retain(r->comm);
    weft_op_retain(r->sched.op());
    // The program may free its datatypes before the operation completes (MPI-3.1 4.1.9).
    r->sched.types_used(r->types);
    for (weft_datatype_t *t : r->types)
        weft_datatype_retain(t);
    if (weft_status_t rc = r->sched.start(); rc != WEFT_SUCCESS) {
        // Reported through the request, as a later failure would be.
        r->sched.advance();
    }
    if (r->sched.advance()) {
        r->status.error = r->sched.status();
        r->active = false;
        r->complete = true;
    } else {
        r->next_active = active;
        active = r;
    }
    *request = r;
    return WEFT_SUCCESS;
}

void stop_progress()
{
    if (progress_registered)
        weft_progress_unregister(progress);
    progress_registered = false;
}

namespace {
bool kept_busy = false; // (under the library's lock, as every call into a component)
Sched &kept_sched()
{
    static Sched s;
    return s;
}
} // namespace

Sched *take_blocking_sched()
{
    if (kept_busy)
        return new Sched;
    kept_busy = true;
    return &kept_sched();
}

void give_blocking_sched(Sched *s)
{
    if (s == &kept_sched())
        kept_busy = false;
    else
        delete s;
}

} // namespace weft::coll::basic
