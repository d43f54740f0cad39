// coll/base: the framework's components at MPI_Init, each communicator's choice of functions
// (coll_base.h), the calls through it, and the non-fault-tolerant agreement coll/base offers
// below every component.
#include "coll_base.h"

#include "coll_base_select.h"

#include "mca_output.h"
#include "mca_select.h"

#include <weft/comm.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::coll::base {

// coll/base's own module for one communicator (the agreement), which finds the communicator's
// choice through the module pointer every operation is handed.
struct BaseModule {
    weft_coll_module_t module; // first: the operations see this
    const CommColl *choice;
};

struct CommColl {
    BaseModule base;
    Table table;
    std::vector<weft_coll_module_t *> modules; // every module comm_query returned
    std::vector<Offer> ranked;                 // the enabled ones, highest priority first
};

namespace {

// The coll components that accepted this job (init_query succeeded).
std::vector<const weft_coll_component_t *> components;
bool coll_open = false;
AgreeObjects agree_objects{};

// With coll_base_verbose >= 10: which module serves each operation of a new communicator.
void describe_choice(const char *label, weft_comm_t *comm, const Table &table,
                     const std::vector<std::pair<weft_coll_module_t *, std::string>> &names)
{
    std::string text = std::string("coll: communicator ") + label + " (" +
                       std::to_string(weft_comm_size(comm)) + " ranks):";
    size_t k = 0;
#define WEFT_COLL_NAME(op)                                                                         \
    {                                                                                              \
        std::string who = "none";                                                                  \
        for (const auto &[m, n] : names)                                                           \
            if (table.owner[k] == m)                                                               \
                who = n;                                                                           \
        text += std::string(" ") + (#op + 5) + "=" + who;                                          \
        ++k;                                                                                       \
    }
    WEFT_COLL_OPS(WEFT_COLL_NAME)
#undef WEFT_COLL_NAME
    output::info(text);
}

// ---- coll/base's agreement: not fault tolerant, an allreduce of the flags with bitwise AND
// (non-blocking: not on intercommunicators, which have no non-blocking allreduce yet).
const CommColl *choice_of(weft_coll_module_t *module)
{
    return reinterpret_cast<BaseModule *>(module)->choice;
}

weft_status_t base_agree(int *flag, weft_group_t **group, weft_comm_t *comm,
                         weft_coll_module_t *module)
{
    const CommColl *c = choice_of(module);
    const auto k = size_t(Op::coll_allreduce);
    if (!c->table.functions.coll_allreduce)
        return WEFT_ERR_NOT_SUPPORTED;
    // On an intercommunicator the allreduce gives each group the remote group's AND, which is
    // the agreement's result there (and takes no MPI_IN_PLACE).
    const int mine = *flag;
    if (weft_status_t rc = c->table.functions.coll_allreduce(
            weft_comm_is_inter(comm) ? &mine : WEFT_IN_PLACE, flag, 1, agree_objects.int_type,
            agree_objects.band, comm, c->table.owner[k]);
        rc != WEFT_SUCCESS)
        return rc;
    if (group)
        *group = agree_objects.empty_group; // nobody failed: nothing to agree on
    return WEFT_SUCCESS;
}

weft_status_t base_iagree(int *flag, weft_group_t **group, weft_comm_t *comm,
                          weft_request_t **request, weft_coll_module_t *module)
{
    const CommColl *c = choice_of(module);
    const auto k = size_t(Op::coll_iallreduce);
    if (weft_comm_is_inter(comm))
        return WEFT_ERR_NOT_SUPPORTED;
    if (!c->table.functions.coll_iallreduce)
        return WEFT_ERR_NOT_SUPPORTED;
    if (group)
        *group = agree_objects.empty_group;
    return c->table.functions.coll_iallreduce(WEFT_IN_PLACE, flag, 1, agree_objects.int_type,
                                              agree_objects.band, comm, request, c->table.owner[k]);
}

weft_status_t base_iagree_group(int *flag, weft_group_t *, weft_group_t **failed, weft_comm_t *comm,
                                weft_request_t **request, weft_coll_module_t *module)
{
    weft_group_t *none = nullptr;
    if (weft_status_t rc = base_iagree(flag, &none, comm, request, module); rc != WEFT_SUCCESS)
        return rc;
    *failed = agree_objects.empty_group; // nobody failed: nothing to agree on
    return WEFT_SUCCESS;
}

// The index in Table::owner of the operation at byte offset `offset`, or Op::count.
size_t op_index(size_t offset)
{
    static const size_t offsets[] = {
#define WEFT_COLL_OFFSET(op) offsetof(weft_coll_module_t, op),
        WEFT_COLL_OPS(WEFT_COLL_OFFSET)
#undef WEFT_COLL_OFFSET
    };
    for (size_t k = 0; k < size_t(Op::count); ++k)
        if (offsets[k] == offset)
            return k;
    return size_t(Op::count);
}

bool reaches(const weft_coll_module_t *m, Slot slot)
{
    return m->struct_size >= slot.offset + slot.size;
}

// Call the operation at slot on the enabled modules from ranked[first] on, by priority, until
// one does not decline; owner (the module chosen for it) is taken to provide it, the others
// only if their struct reaches it. Modules built for an older ABI than min_minor are passed over.
weft_status_t walk(const CommColl &c, size_t first, const weft_coll_module_t *owner, Slot slot,
                   unsigned min_minor,
                   weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                   void *context)
{
    weft_status_t rc = WEFT_ERR_NOT_SUPPORTED;
    for (size_t i = first; i < c.ranked.size() && rc == WEFT_ERR_NOT_SUPPORTED; ++i) {
        const Offer &o = c.ranked[i];
        if ((o.module == owner || reaches(o.module, slot)) && o.abi_minor >= min_minor)
            rc = invoke(context, o.module);
    }
    return rc;
}

// Each enabled module's communicator choice, for weft_coll_call_below (which is handed the
// module alone: a module of one communicator, coll.h; one shared by several, as coll/basic's
// is, maps to the last communicator enabled with it). Communicators may be made from progress
// (MPIX_Comm_ishrink): a lock.
std::mutex served_lock;
std::unordered_map<const weft_coll_module_t *, const CommColl *> served;

} // namespace

weft_status_t init(const AgreeObjects &objects)
{
    components.clear();
    agree_objects = objects;
    mca::FrameworkBase *base = mca::framework_base("coll");
    std::vector<mca::Candidate> chosen;
    if (!base)
        return WEFT_ERR_NOT_FOUND;
    // A bad --mca coll list (an unknown component, say) is an error, as for every framework.
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    if (weft_status_t rc = base->select_all(chosen); rc != WEFT_SUCCESS)
        return rc;
    for (const mca::Candidate &c : chosen) {
        const auto *comp = reinterpret_cast<const weft_coll_component_t *>(c.component->desc);
        if (comp->init_query) {
            if (weft_status_t rc = comp->init_query(0, 0); rc != WEFT_SUCCESS) {
                output::warning(std::string("coll/") + comp->mca.name +
                                " cannot run and is left out: " + weft_status_string(rc));
                continue;
            }
        }
        components.push_back(comp);
    }
    coll_open = true;
    return WEFT_SUCCESS;
}

void finalize()
{
    components.clear();
    if (coll_open)
        mca::framework_base("coll")->close();
    coll_open = false;
}

weft_status_t comm_enable(weft_comm_t *comm, const char *label, CommColl **choice)
{
    auto *c = new CommColl;
    // coll/base's agreement, below anything a component offers (every other operation NULL).
    weft_coll_module_t *base_module = &c->base.module;
    *base_module = weft_coll_module_t{};
    base_module->struct_size = sizeof(weft_coll_module_t);
    base_module->coll_agree = base_agree;
    base_module->coll_iagree = base_iagree;
    base_module->coll_iagree_group = base_iagree_group;
    c->base.choice = c;
    std::vector<Offer> offers;
    std::vector<std::pair<weft_coll_module_t *, std::string>> names;
    offers.push_back({base_module, INT_MIN});
    names.emplace_back(base_module, "base");
    for (const weft_coll_component_t *comp : components) {
        int priority = 0;
        if (weft_coll_module_t *m =
                comp->comm_query ? comp->comm_query(comm, &priority) : nullptr) {
            offers.push_back({m, priority, comp->mca.framework_abi_minor});
            c->modules.push_back(m);
            names.emplace_back(m, comp->mca.name);
        }
    }
    // Enable the winners (once each); one that fails is dropped and the choice made again
    // without it. Every rank goes through the same offers in the same order.
    std::vector<weft_coll_module_t *> enabled = {base_module};
    auto is_enabled = [&](weft_coll_module_t *m) {
        return std::find(enabled.begin(), enabled.end(), m) != enabled.end();
    };
    for (bool again = true; again;) {
        again = false;
        resolve(offers, c->table);
        for (size_t i = 1; i < offers.size(); ++i) {
            weft_coll_module_t *m = offers[i].module;
            bool won = false;
            for (weft_coll_module_t *owner : c->table.owner)
                won |= owner == m;
            if (!won || is_enabled(m))
                continue;
            if (m->coll_module_enable && m->coll_module_enable(m, comm) != WEFT_SUCCESS) {
                offers.erase(offers.begin() + ptrdiff_t(i));
                again = true;
                break;
            }
            enabled.push_back(m);
        }
    }
    // What a declined call may fall back to: enabled modules only, by priority.
    for (const Offer &o : offers)
        if (is_enabled(o.module))
            c->ranked.push_back(o);
    std::stable_sort(c->ranked.begin(), c->ranked.end(),
                     [](const Offer &a, const Offer &b) { return a.priority > b.priority; });
    {
        const std::lock_guard<std::mutex> hold(served_lock);
        for (const Offer &o : c->ranked)
            served[o.module] = c;
    }
    *choice = c;
    if (mca::framework_base("coll")->verbose() >= 10)
        describe_choice(label, comm, c->table, names);
    return WEFT_SUCCESS;
}

void comm_disable(weft_comm_t *comm, CommColl *choice)
{
    if (!choice)
        return;
    {
        const std::lock_guard<std::mutex> hold(served_lock);
        for (const Offer &o : choice->ranked)
            if (const auto it = served.find(o.module); it != served.end() && it->second == choice)
                served.erase(it); // a module shared by communicators may serve a later one
    }
    for (weft_coll_module_t *m : choice->modules)
        if (m->coll_module_disable)
            m->coll_module_disable(m, comm);
    delete choice;
}

weft_status_t call_slot(const CommColl *choice, Slot slot, unsigned min_minor,
                        weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                        void *context, bool &found)
{
    const size_t k = op_index(slot.offset);
    weft_coll_module_t *owner = choice && k < size_t(Op::count) ? choice->table.owner[k] : nullptr;
    found = owner != nullptr;
    if (!owner)
        return WEFT_ERR_NOT_SUPPORTED;
    // A module may decline one call (coll.h), and one built for an older ABI than the call
    // needs is passed over: the next module by priority that provides the operation takes it.
    const auto at = std::find_if(choice->ranked.begin(), choice->ranked.end(),
                                 [owner](const Offer &o) { return o.module == owner; });
    return walk(*choice, size_t(at - choice->ranked.begin()), owner, slot, min_minor, invoke,
                context);
}

weft_status_t call_below(const weft_coll_module_t *module, Slot slot, unsigned min_minor,
                         weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                         void *context)
{
    const CommColl *c = nullptr;
    {
        const std::lock_guard<std::mutex> hold(served_lock);
        if (const auto it = served.find(module); it != served.end())
            c = it->second;
    }
    if (!c)
        return WEFT_ERR_NOT_SUPPORTED;
    const auto at = std::find_if(c->ranked.begin(), c->ranked.end(),
                                 [module](const Offer &o) { return o.module == module; });
    if (at == c->ranked.end())
        return WEFT_ERR_NOT_SUPPORTED;
    return walk(*c, size_t(at - c->ranked.begin()) + 1, nullptr, slot, min_minor, invoke, context);
}

} // namespace weft::coll::base

// The core's entry points (coll.h), over the C++ ones above.
extern "C" {

weft_status_t weft_coll_base_init(weft_datatype_t *int_type, weft_op_t *band,
                                  weft_group_t *empty_group)
{
    return weft::coll::base::init({.int_type = int_type, .band = band, .empty_group = empty_group});
}

void weft_coll_base_finalize(void) { weft::coll::base::finalize(); }

weft_status_t weft_coll_comm_enable(weft_comm_t *comm, const char *label,
                                    weft_coll_choice_t **choice)
{
    weft::coll::base::CommColl *c = nullptr;
    const weft_status_t rc = weft::coll::base::comm_enable(comm, label, &c);
    *choice = reinterpret_cast<weft_coll_choice_t *>(c);
    return rc;
}

void weft_coll_comm_disable(weft_comm_t *comm, weft_coll_choice_t *choice)
{
    weft::coll::base::comm_disable(comm, reinterpret_cast<weft::coll::base::CommColl *>(choice));
}

weft_status_t weft_coll_call(const weft_coll_choice_t *choice, size_t op_offset, size_t op_size,
                             weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                             void *context, int *found)
{
    bool f = false;
    const weft_status_t rc =
        weft::coll::base::call_slot(reinterpret_cast<const weft::coll::base::CommColl *>(choice),
                                    {op_offset, op_size}, 0, invoke, context, f);
    *found = f;
    return rc;
}

weft_status_t weft_coll_call_below(
    const weft_coll_module_t *module, size_t op_offset, size_t op_size, unsigned min_minor,
    weft_status_t (*invoke)(void *context, weft_coll_module_t *module), void *context)
{
    return weft::coll::base::call_below(module, {op_offset, op_size}, min_minor, invoke, context);
}

weft_status_t weft_coll_call_min(const weft_coll_choice_t *choice, size_t op_offset, size_t op_size,
                                 unsigned min_minor,
                                 weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                                 void *context, int *found)
{
    bool f = false;
    const weft_status_t rc =
        weft::coll::base::call_slot(reinterpret_cast<const weft::coll::base::CommColl *>(choice),
                                    {op_offset, op_size}, min_minor, invoke, context, f);
    *found = f;
    return rc;
}

} // extern "C"
