//! The Store's state in the wire's shape, for the window code that still reads DTOs.
//!
//! A bridge while the window moves to the typed [`berth_server::view::StateView`]
//! (`Store::view`), which is what the Store hands out.

use berth_server::protocol::WorkspaceListDto;
use berth_server::store::Store;

/// [`Store::view`] as the DTO `workspace.list` answers.
pub(crate) trait StoreList {
    /// The whole state as `workspace.list` answers it.
    fn list(&self) -> WorkspaceListDto;
}

impl StoreList for Store {
    fn list(&self) -> WorkspaceListDto {
        WorkspaceListDto::from(&self.view())
    }
}
